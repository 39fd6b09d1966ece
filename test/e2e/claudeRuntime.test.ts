import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { temporalForFile } from '../support/temporal';
import { resultJson, type Conversation } from '../../src/model/scripted/conversation';
import { startScriptedModel, type ScriptedModel, type Step } from '../../src/model/scripted/server';

/**
 * Agents as real Claude Agent SDK sessions (the `claude` runtime kind): the
 * CLI the SDK ships, driven by the scripted model behind Dipper's model
 * proxy, offline. The lead plans and spawns a helper; the helper messages
 * the lead and hands its work in; each hears the other through its inbox.
 */
const MODEL_KEY = 'sk-operator-key-never-for-agents-7f3a';

/** A root that hands in at every new user turn: the crash ladder's agent. */
const handsIn = (c: Conversation): Step => {
  if (c.last?.kind === 'user') return { calls: [{ tool: 'signal_review', input: { detail: `[REVIEW REQUIRED] after ${c.userTexts.length} user turn(s)` } }] };
  return { say: 'Handed in; waiting.' };
};

const lead = (c: Conversation): Step => {
  if (c.userTexts[0]?.includes('[crash ladder]')) return handsIn(c);
  if (c.userTexts[0]?.includes('[mid turn]')) return newsLead(c);
  if (c.calls('declare_plan').length === 0) {
    return { calls: [{ tool: 'declare_plan', input: { tasks: [{ id: 'hello', role: 'helper', skill: 'worker', task: 'Greet your leader, then hand in your work.' }] } }] };
  }
  if (c.calls('spawn_agent').length === 0) return { calls: [{ tool: 'spawn_agent', input: { task_id: 'hello' } }] };
  // Items fed while a turn runs may reach the model as one user turn: a report need not start it.
  const report = c.userTexts.find((t) => /^\[REVIEW REPORT from /m.test(t));
  // A review waits: the shell is gated like Dipper's own tools, and the refusal says what to do.
  if (report && c.calls('Bash').length === 0) return { calls: [{ tool: 'Bash', input: { command: 'echo past the gate', description: 'try the shell' } }] };
  if (report && c.calls('terminate_child').length === 0) {
    const helper = /^\[REVIEW REPORT from (\S+)\]/m.exec(report)![1];
    return { calls: [{ tool: 'terminate_child', input: { agent_id: helper } }] };
  }
  if (c.calls('terminate_child').length > 0 && c.calls('signal_review').length === 0) {
    return { calls: [{ tool: 'signal_review', input: { detail: `[REVIEW REQUIRED] The helper said: ${c.userTexts.join('\n').match(/^\[MESSAGE from /gm)?.length ?? 0} message(s).` } }] };
  }
  return { say: 'Waiting for my team.' };
};

const helper = (c: Conversation): Step => {
  if (c.userTexts[0]?.includes('[mid turn]')) return busyMember(c);
  if (c.calls('list_peers').length === 0) return { calls: [{ tool: 'list_peers', input: { scope: 'all' } }] };
  if (c.calls('send_message').length === 0) {
    const peers = (resultJson(c.calls('list_peers')[0])?.peers ?? []) as Array<{ agent_id: string; is_leader_of: string[] }>;
    const leader = peers.find((p) => p.is_leader_of.length > 0);
    return { calls: [{ tool: 'send_message', input: { to: leader?.agent_id ?? 'nobody', content: 'Hello from the helper.' } }] };
  }
  if (c.calls('signal_review').length === 0) return { calls: [{ tool: 'signal_review', input: { detail: '[REVIEW REQUIRED] I greeted my leader.' } }] };
  return { say: 'Handed in.' };
};

/** A lead that gives its member news once the member says it is busy in a turn of its own. */
const newsLead = (c: Conversation): Step => {
  if (c.calls('declare_plan').length === 0) {
    return { calls: [{ tool: 'declare_plan', input: { tasks: [{ id: 'busy', role: 'busy', skill: 'worker', task: '[mid turn] Work for a while.' }] } }] };
  }
  if (c.calls('spawn_agent').length === 0) return { calls: [{ tool: 'spawn_agent', input: { task_id: 'busy' } }] };
  const busy = c.userTexts.find((t) => /^\[MESSAGE from \S+\]\nBusy now\./.test(t));
  if (busy && c.calls('send_message').length === 0) {
    return { calls: [{ tool: 'send_message', input: { to: /^\[MESSAGE from (\S+)\]/.exec(busy)![1], content: 'News while you work.' } }] };
  }
  return { say: 'Waiting.' };
};

/** A member that tells its lead it is busy, then runs a slow command in the same turn, and answers the news once it hears it. */
const busyMember = (c: Conversation): Step => {
  if (c.calls('list_peers').length === 0) return { calls: [{ tool: 'list_peers', input: { scope: 'all' } }] };
  const leader = ((resultJson(c.calls('list_peers')[0])?.peers ?? []) as Array<{ agent_id: string; is_leader_of: string[] }>).find((p) => p.is_leader_of.length > 0)?.agent_id ?? 'nobody';
  if (c.calls('send_message').length === 0) return { calls: [{ tool: 'send_message', input: { to: leader, content: 'Busy now.' } }] };
  // Long enough for the lead to hear "busy" and answer while this command still runs, even on a loaded machine.
  if (c.calls('Bash').length === 0) return { calls: [{ tool: 'Bash', input: { command: 'sleep 10; echo worked', description: 'work for a while' } }] };
  const news = c.userTexts.filter((t) => t.includes('News while you work.'));
  if (news.length > 0 && c.calls('send_message').length === 1) return { calls: [{ tool: 'send_message', input: { to: leader, content: `Heard the news ${news.length} time(s).` } }] };
  return { say: 'Working.' };
};

/** Asks the person a question, asks again (the same question) when its client gave up waiting, and hands in the answer. */
const asker = (c: Conversation): Step => {
  const answered = c.calls('ask_user').find((x) => !x.isError);
  if (!answered) {
    const question = { question: 'Ship it?', header: 'Ship', multiSelect: false, options: [{ label: 'Yes', description: 'ship now' }, { label: 'No', description: 'wait' }] };
    return { calls: [{ tool: 'ask_user', input: { questions: [question] } }] };
  }
  if (c.calls('signal_review').length === 0) return { calls: [{ tool: 'signal_review', input: { detail: `[REVIEW REQUIRED] The answer: ${answered.result}` } }] };
  return { say: 'Done.' };
};

/** An agent whose shadow tools are offered (layer 1 off, as if it leaked): its call of one meets the hook. */
const leaky = (c: Conversation): Step => {
  if (c.userTexts[0]?.includes('[ask]')) return asker(c);
  if (c.calls('SendMessage').length === 0) return { calls: [{ tool: 'SendMessage', input: { to: 'team-lead', message: 'Done, I think.', summary: 'done' } }] };
  if (c.calls('signal_review').length === 0) return { calls: [{ tool: 'signal_review', input: { detail: '[REVIEW REQUIRED] Tried the shadow tool.' } }] };
  return { say: 'Done.' };
};

/** Looks at its peers at every turn, forever: only its budget stops it. */
const thrifty = (): Step => ({ calls: [{ tool: 'list_peers', input: { scope: 'all' } }] });

/** Processes whose environment names the run: an agent's runtime and the Claude CLI under it. */
function processesOfRun(runId: string): Array<{ pid: number; environ: string }> {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        const environ = fs.readFileSync(`/proc/${p}/environ`, 'utf8');
        return environ.split('\0').includes(`DIPPER_RUN_ID=${runId}`) ? [{ pid: Number(p), environ }] : [];
      } catch {
        return [];
      }
    });
}

/** Reads each agent's token from its runtime's environment while it runs, as anything on the host with the rights could. */
function tokensOf(runId: string): { tokens: Map<string, string>; stop: () => void } {
  const tokens = new Map<string, string>();
  const timer = setInterval(() => {
    for (const p of processesOfRun(runId)) {
      const vars = new Map(p.environ.split('\0').map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
      const agent = vars.get('DIPPER_AGENT_ID');
      const token = vars.get('DIPPER_AGENT_TOKEN');
      if (agent && token) tokens.set(agent, token);
    }
  }, 50);
  timer.unref();
  return { tokens, stop: () => clearInterval(timer) };
}

let model: ScriptedModel;
let stack: Stack;
const temporal = temporalForFile();
beforeAll(async () => {
  model = await startScriptedModel({ lead, worker: helper, reviewer: leaky, thrifty });
  stack = await startStack('claude', 28905, {
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'claude' }, skills: { reviewer: { kind: 'claude', env: { DIPPER_CLAUDE_SHADOW_TOOLS: 'offered', MCP_TOOL_TIMEOUT: '2000' } } } }),
    DIPPER_MODEL_UPSTREAM_URL: model.url,
    DIPPER_MODEL_API_KEY: MODEL_KEY,
    DIPPER_MODEL_BUDGETS: JSON.stringify({ skills: { thrifty: { turns: 3 } } }),
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await model?.close();
});

const processOf = (runId: string, agentId: string): number | null => {
  const file = path.join(stack.env.DIPPER_DATA_DIR, 'runs', runId, 'agents', agentId, 'runtime.pid');
  return fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8').split(' ')[0]) : null;
};

/** Kills the agent's whole process group (the runtime and the CLI under it) as a crash would, and returns the pid it had. */
async function crash(runId: string, agentId: string): Promise<number> {
  const pid = await eventually(async () => processOf(runId, agentId) ?? undefined, 30_000);
  process.kill(-pid, 'SIGKILL');
  return pid;
}

describe('the claude runtime', () => {
  it('runs a lead and its helper as Claude sessions that hear their inboxes, through the model proxy', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Say hello as a team.', root_skill: 'lead' })).json;
    const rootId: string = run.root.agent_id;
    const sampler = tokensOf(run.run_id);
    // The lead's own report reaches the person once it heard the helper's message and report and approved the helper.
    await eventually(async () => ((await stack.operator.events(run.run_id, 'completion.reported')).some((e) => e.agent_id === rootId) ? true : undefined), 120_000, 500);

    const byAgent = (skill: string) => model.requests.filter((r) => r.agent?.skill === skill);
    const leadLast = byAgent('lead').at(-1)!.conversation;
    expect(leadLast.userTexts.filter((t) => t.includes('Hello from the helper.'))).toHaveLength(1);
    expect(leadLast.userTexts.join('\n').match(/^\[REVIEW REPORT from /gm)).toHaveLength(1);
    // The lead tried its shell while the helper's review waited: the runtime's hook asked the gateway, which refused it.
    const [gated] = leadLast.calls('Bash');
    expect(gated).toMatchObject({ isError: true });
    expect(gated.result).toContain("Bash waits until you answer your children's pending reviews");
    expect(gated.result).not.toContain('past the gate');
    const denied = (await stack.operator.events(run.run_id, 'review_gate.denied')).filter((e) => e.agent_id === rootId);
    expect(denied.map((e) => e.data.tool)).toEqual(['Bash']);
    // The helper's first user turn carries its task assignment.
    expect(byAgent('worker')[0].conversation.userTexts[0]).toMatch(/^\[TASK ASSIGNMENT\][\s\S]*plan_task_id: hello[\s\S]*Greet your leader/);
    // Dipper's tools are offered directly; the shadow tools are not offered at all.
    for (const r of model.requests.filter((x) => x.agent)) {
      expect(r.tools).toEqual(expect.arrayContaining(['mcp__beidou__send_message', 'mcp__agentteam__task_list', 'mcp__isphere__isphere_send_message']));
      expect(r.tools.filter((t) => ['SendMessage', 'TodoWrite', 'AskUserQuestion'].includes(t))).toEqual([]);
    }
    // The proxy counted every answer's tokens as the agent's: the run's model.usage events add up to what the model reported.
    // The agents may still be talking: each look compares one reading of the events with the model's requests read after it.
    const spentIn = (requests: typeof model.requests) => requests.reduce((n, r) => n + r.reply.usage.input_tokens + r.reply.usage.output_tokens, 0);
    await eventually(async () => {
      const counted = (await stack.operator.events(run.run_id, 'model.usage')).reduce((n, e) => n + e.data.input_tokens + e.data.output_tokens, 0);
      return counted === spentIn(model.requests) ? true : undefined;
    }, 15_000, 250);
    // The run API adds them up, per agent and for the run.
    const usage = await eventually(async () => {
      const read = (await stack.operator.request('GET', `/runs/${run.run_id}`)).json.model_usage;
      return read.total.requests === model.requests.length && read.total.input_tokens + read.total.output_tokens === spentIn(model.requests) ? read : undefined;
    }, 15_000, 250);
    expect(usage.by_agent).toHaveLength(2);
    expect(new Set((await stack.operator.events(run.run_id, 'model.usage')).map((e) => e.agent_id))).toEqual(new Set([rootId, fs.readdirSync(path.join(stack.env.DIPPER_DATA_DIR, 'runs', run.run_id, 'agents')).find((a) => a !== rootId)]));
    // Every request reached the model with the operator's key, none with an agent's token.
    expect(new Set(model.requests.map((r) => r.apiKey))).toEqual(new Set([MODEL_KEY]));
    // Every inbox item was acknowledged once the session had it: the event log says each was taken in.
    const inputs = await stack.operator.events(run.run_id, 'agent_input');
    expect(inputs.filter((e) => e.agent_id === rootId).map((e) => e.data.kind).sort()).toEqual(['message', 'review_report']);

    // The model key is in no agent process's environment (the runtime's, the CLI's), while the lead still runs.
    const agentProcesses = processesOfRun(run.run_id);
    expect(agentProcesses.length).toBeGreaterThanOrEqual(2);
    for (const p of agentProcesses) expect(p.environ).not.toContain(MODEL_KEY);

    // The approved helper got its terminate item and closed its session cleanly before exiting.
    const agentsDir = path.join(stack.env.DIPPER_DATA_DIR, 'runs', run.run_id, 'agents');
    const helperId = fs.readdirSync(agentsDir).find((a) => a !== rootId)!;
    const stderrOf = (agentId: string) => fs.readFileSync(path.join(agentsDir, agentId, 'stderr.log'), 'utf8');
    await eventually(async () => (stderrOf(helperId).includes('session closed after the terminate item') ? true : undefined), 30_000, 250);
    // Its credential at the model proxy (its token, read from its environment while it ran) dies with it.
    sampler.stop();
    const askAsHelper = () =>
      fetch(`${stack.gatewayUrl}/model/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': sampler.tokens.get(helperId)!, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const refused = await eventually(async () => {
      const res = await askAsHelper();
      return res.status === 401 ? ((await res.json()) as { error: { code: string } }) : undefined;
    }, 20_000, 250);
    expect(refused.error.code).toBe('token_revoked');
    // Ending the run stops the lead's process too; no process is left.
    expect((await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' })).status).toBe(200);
    await eventually(async () => (fs.readdirSync(agentsDir).every((a) => !fs.existsSync(path.join(agentsDir, a, 'runtime.pid'))) ? true : undefined), 60_000, 250);
    // Nor is the key in any log, event or workflow history of the run.
    for (const agentId of [rootId, helperId]) expect(stderrOf(agentId)).not.toContain(MODEL_KEY);
    const logs = path.dirname(stack.env.DIPPER_DATA_DIR);
    for (const file of fs.readdirSync(logs).filter((f) => f.endsWith('.log'))) expect(fs.readFileSync(path.join(logs, file), 'utf8')).not.toContain(MODEL_KEY);
    expect(JSON.stringify(await stack.operator.events(run.run_id))).not.toContain(MODEL_KEY);
    let histories = 0;
    for await (const wf of temporal.client.workflow.list({ query: `DipperRunId = '${run.run_id}'` })) {
      const history = await temporal.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      expect(JSON.stringify(history)).not.toContain(MODEL_KEY);
      histories++;
    }
    expect(histories).toBeGreaterThanOrEqual(3);
  }, 180_000);

  it('resumes the same session after a first crash, starts a fresh one after a second, and escalates the third', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: '[crash ladder] Hand in, then redo it when asked.', root_skill: 'lead' })).json;
    const rootId: string = run.root.agent_id;
    const reports = async () => (await stack.operator.events(run.run_id, 'completion.reported')).filter((e) => e.agent_id === rootId).length;
    const stderr = () => fs.readFileSync(path.join(stack.env.DIPPER_DATA_DIR, 'runs', run.run_id, 'agents', rootId, 'stderr.log'), 'utf8');
    const requestsOfRun = () => model.requests.filter((r) => r.agent?.skill === 'lead' && r.conversation.userTexts[0]?.includes('[crash ladder]'));
    await eventually(async () => ((await reports()) === 1 ? true : undefined), 60_000, 250);

    // First crash: the runtime comes back on the same session, whose transcript already holds the task.
    const first = await crash(run.run_id, rootId);
    await eventually(async () => (stderr().includes('session resumed (launch mode resume)') ? true : undefined), 60_000, 250);
    expect(processOf(run.run_id, rootId)).not.toBe(first);
    const rework = await stack.operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'rework', text: 'Redo it, please.' });
    expect(rework.status).toBe(200);
    await eventually(async () => ((await reports()) === 2 ? true : undefined), 60_000, 250);
    const resumed = requestsOfRun().find((r) => r.conversation.userTexts.some((t) => t.includes('Redo it, please.')))!;
    // The resumed session heard the rework after its task, each once: nothing was fed twice.
    expect(resumed.conversation.userTexts).toHaveLength(2);
    expect(resumed.conversation.userTexts[0]).toContain('[crash ladder]');

    // Second crash: a fresh session, which starts from the task again.
    const before = requestsOfRun().length;
    await crash(run.run_id, rootId);
    await eventually(async () => (stderr().includes('session started (launch mode fresh)') ? true : undefined), 60_000, 250);
    const fresh = await eventually(async () => requestsOfRun().slice(before).find((r) => r.conversation.userTexts.length === 1), 60_000, 250);
    expect(fresh.conversation.calls()).toEqual([]);

    // Third crash: not started again; the person is told.
    await crash(run.run_id, rootId);
    await eventually(async () => ((await stack.operator.events(run.run_id, 'root_crash_escalation')).length === 1 ? true : undefined), 60_000, 250);
    const crashed = await stack.operator.events(run.run_id, 'agent_crashed');
    expect(crashed.filter((e) => e.agent_id === rootId)).toHaveLength(3);
    expect(processOf(run.run_id, rootId)).toBeNull();
    // Shown to the person as a question, with what the root last wrote.
    const question = await eventually(async () => {
      const list = (await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions as any[];
      return list.find((q) => q.system?.kind === 'root_stopped');
    }, 30_000, 250);
    expect(question.questions[0].question).toContain('crashed 3 times and was not restarted');
    expect(question.context).toContain('Its last lines on stderr');
    await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
  }, 240_000);

  it('denies a shadow tool that reaches a call (layer 2) with the Dipper tool to use, and records it', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Try the shadow tools.', root_skill: 'reviewer' })).json;
    await eventually(async () => ((await stack.operator.events(run.run_id, 'completion.reported')).length === 1 ? true : undefined), 60_000, 250);
    const last = model.requests.filter((r) => r.agent?.skill === 'reviewer').at(-1)!.conversation;
    // Layer 1 was off for this runtime: the model was offered the shadow tool, and the hook stood in.
    expect(model.requests.find((r) => r.agent?.skill === 'reviewer')!.tools).toContain('SendMessage');
    const [shadow] = last.calls('SendMessage');
    expect(shadow).toMatchObject({ isError: true });
    expect(shadow.result).toContain('Use mcp__beidou__send_message');
    expect((await stack.operator.events(run.run_id, 'disallowed_alias.denied')).map((e) => e.data)).toEqual([{ tool: 'SendMessage' }]);
    await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
  }, 120_000);

  it('feeds an inbox item to a member in the middle of a turn, and the member hears it once', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: '[mid turn] Keep your member informed.', root_skill: 'lead' })).json;
    const rootId: string = run.root.agent_id;
    const heard = await eventually(async () => model.requests.find((r) => r.agent?.skill === 'lead' && r.conversation.userTexts.some((t) => t.includes('Heard the news'))), 90_000, 250);
    expect(heard.conversation.userTexts.filter((t) => t.includes('Heard the news'))).toEqual([expect.stringContaining('Heard the news 1 time(s).')]);
    const agentsDir = path.join(stack.env.DIPPER_DATA_DIR, 'runs', run.run_id, 'agents');
    const memberId = fs.readdirSync(agentsDir).find((a) => a !== rootId)!;
    const lines = fs.readFileSync(path.join(agentsDir, memberId, 'stderr.log'), 'utf8').split('\n');
    // The news was fed while the member's first turn (its slow command) was still running.
    const fed = lines.findIndex((l) => l.includes('(message) becomes the next user turn'));
    const firstTurnEnded = lines.findIndex((l) => l.includes('turn ended'));
    expect(fed).toBeGreaterThanOrEqual(0);
    expect(firstTurnEnded === -1 || fed < firstTurnEnded).toBe(true);
    // And the session handed it to the model inside that turn, beside the command's result.
    const afterCommand = model.requests.find((r) => r.agent?.skill === 'worker' && r.conversation.userTexts[0]?.includes('[mid turn]') && r.conversation.calls('Bash').length === 1)!;
    expect(afterCommand.conversation.entries.filter((e) => e.kind === 'user' && e.midTurn)).toEqual([{ kind: 'user', text: expect.stringContaining('News while you work.'), midTurn: true }]);
    // Acknowledged once the session stored it: the event log records its delivery (written within the event window).
    await eventually(async () => ((await stack.operator.events(run.run_id, 'agent_input')).some((e) => e.agent_id === memberId) ? true : undefined), 15_000, 250);
    const inputs = (await stack.operator.events(run.run_id, 'agent_input')).filter((e) => e.agent_id === memberId);
    expect(inputs.map((e) => e.data.kind)).toEqual(['message']);
    await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
  }, 120_000);

  it('still gets the answer to an ask_user that outlasts its MCP client\'s wait', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: '[ask] Ask whether to ship.', root_skill: 'reviewer' })).json;
    const askRequests = () => model.requests.filter((r) => r.agent?.skill === 'reviewer' && r.conversation.userTexts[0]?.includes('[ask]'));
    // The CLI's own wait (2 s for this runtime) ran out before anyone answered, and the agent asked again.
    await eventually(async () => (askRequests().some((r) => r.conversation.calls('ask_user').length >= 2) ? true : undefined), 60_000, 250);
    const question = await eventually(async () => (await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions[0], 30_000, 250);
    expect((await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions).toHaveLength(1);
    const answered = await stack.operator.request('POST', `/runs/${run.run_id}/questions/${question.qid}/answer`, { answers: [{ selected_labels: ['Yes'], text: null }] });
    expect(answered.status).toBe(200);
    const report = await eventually(async () => (await stack.operator.events(run.run_id, 'completion.reported'))[0], 60_000, 250);
    expect(JSON.stringify(report)).toContain('Yes');
    await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
  }, 120_000);

  it('stops an agent whose budget is spent, and asks the person about a stopped root; their answer starts it again', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Look around.', root_skill: 'thrifty' })).json;
    const rootId: string = run.root.agent_id;
    const sampler = tokensOf(run.run_id);
    const stopped = async (n: number) => {
      const events = await stack.operator.events(run.run_id, 'agent_budget_exceeded');
      return events.length >= n ? events : undefined;
    };
    const [first] = await eventually(() => stopped(1), 90_000, 250);
    expect(first).toMatchObject({ agent_id: rootId, data: { budget: 'agent', measure: 'turns', used: 3, limit: 3 } });
    // Three answered requests, the fourth refused before it reached the model.
    const usage = (await stack.operator.request('GET', `/runs/${run.run_id}`)).json.model_usage;
    expect(usage.by_agent.find((a: { agent_id: string }) => a.agent_id === rootId).requests).toBe(3);
    expect(model.requests.filter((r) => r.agent?.skill === 'thrifty')).toHaveLength(3);
    // Stopped: no process, its launch's token refused, its lifecycle ended with the reason.
    await eventually(async () => (processOf(run.run_id, rootId) === null ? true : undefined), 30_000, 250);
    sampler.stop();
    const token = sampler.tokens.get(rootId)!;
    const refused = await eventually(async () => {
      const res = await fetch(`${stack.gatewayUrl}/model/v1/messages`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: '{}' });
      return res.status === 401 ? ((await res.json()) as { error: { code: string } }) : undefined;
    }, 20_000, 250);
    expect(refused.error.code).toBe('token_revoked');
    const completed = (await stack.operator.events(run.run_id, 'agent_completed')).filter((e) => e.agent_id === rootId);
    expect(completed.map((e) => e.data.stop_reason)).toEqual(['budget_exceeded']);

    // The root's leader is the person: a question in their inbox says what happened.
    const question = await eventually(async () => {
      const list = (await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions as any[];
      return list.find((q) => q.system?.kind === 'root_stopped');
    }, 30_000, 250);
    expect(question.questions[0].question).toContain("spent its skill's turn budget (3 used of 3)");
    const answered = await stack.operator.request('POST', `/runs/${run.run_id}/questions/${question.qid}/answer`, { answers: [{ selected_labels: [], text: 'Go on, briefly.' }] });
    expect(answered.status).toBe(200);
    // Started again, fresh: its first request meets the same spent budget, so it is stopped again, and asked about again.
    await eventually(async () => ((await stack.operator.events(run.run_id, 'agent_restarted')).length === 1 ? true : undefined), 30_000, 250);
    const [, second] = await eventually(() => stopped(2), 60_000, 250);
    expect(second.data).toMatchObject({ budget: 'agent', used: 3, limit: 3 });
    expect(model.requests.filter((r) => r.agent?.skill === 'thrifty')).toHaveLength(3);
    await eventually(async () => {
      const list = (await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions as any[];
      return list.some((q) => q.system?.kind === 'root_stopped' && q.qid !== question.qid) ? true : undefined;
    }, 30_000, 250);
    await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
  }, 180_000);
});
