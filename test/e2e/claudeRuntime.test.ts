import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { resultJson, type Conversation } from '../../src/model/scripted/conversation';
import { startScriptedModel, type ScriptedModel, type Step } from '../../src/model/scripted/server';

/**
 * Agents as real Claude Agent SDK sessions (the `claude` runtime kind): the
 * CLI the SDK ships, driven by the scripted model behind Dipper's model
 * proxy, offline. The lead plans and spawns a helper; the helper messages
 * the lead and hands its work in; each hears the other through its inbox.
 */
const MODEL_KEY = 'sk-operator-key-never-for-agents-7f3a';

const lead = (c: Conversation): Step => {
  if (c.calls('declare_plan').length === 0) {
    return { calls: [{ tool: 'declare_plan', input: { tasks: [{ id: 'hello', role: 'helper', skill: 'worker', task: 'Greet your leader, then hand in your work.' }] } }] };
  }
  if (c.calls('spawn_agent').length === 0) return { calls: [{ tool: 'spawn_agent', input: { task_id: 'hello' } }] };
  const report = c.userTexts.find((t) => t.startsWith('[REVIEW REPORT from '));
  if (report && c.calls('terminate_child').length === 0) {
    const helper = /from (\S+)\]/.exec(report)![1];
    return { calls: [{ tool: 'terminate_child', input: { agent_id: helper } }] };
  }
  if (c.calls('terminate_child').length > 0 && c.calls('signal_review').length === 0) {
    return { calls: [{ tool: 'signal_review', input: { detail: `[REVIEW REQUIRED] The helper said: ${c.userTexts.filter((t) => t.startsWith('[MESSAGE from ')).length} message(s).` } }] };
  }
  return { say: 'Waiting for my team.' };
};

const helper = (c: Conversation): Step => {
  if (c.calls('list_peers').length === 0) return { calls: [{ tool: 'list_peers', input: { scope: 'all' } }] };
  if (c.calls('send_message').length === 0) {
    const peers = (resultJson(c.calls('list_peers')[0])?.peers ?? []) as Array<{ agent_id: string; is_leader_of: string[] }>;
    const leader = peers.find((p) => p.is_leader_of.length > 0);
    return { calls: [{ tool: 'send_message', input: { to: leader?.agent_id ?? 'nobody', content: 'Hello from the helper.' } }] };
  }
  if (c.calls('signal_review').length === 0) return { calls: [{ tool: 'signal_review', input: { detail: '[REVIEW REQUIRED] I greeted my leader.' } }] };
  return { say: 'Handed in.' };
};

let model: ScriptedModel;
let stack: Stack;
beforeAll(async () => {
  model = await startScriptedModel({ lead, worker: helper });
  stack = await startStack('claude', 28905, {
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'claude' } }),
    DIPPER_MODEL_UPSTREAM_URL: model.url,
    DIPPER_MODEL_API_KEY: MODEL_KEY,
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await model?.close();
});

describe('the claude runtime', () => {
  it('runs a lead and its helper as Claude sessions that hear their inboxes, through the model proxy', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Say hello as a team.', root_skill: 'lead' })).json;
    const rootId: string = run.root.agent_id;
    // The lead's own report reaches the person once it heard the helper's message and report and approved the helper.
    await eventually(async () => ((await stack.operator.events(run.run_id, 'completion.reported')).some((e) => e.agent_id === rootId) ? true : undefined), 120_000, 500);

    const byAgent = (skill: string) => model.requests.filter((r) => r.agent?.skill === skill);
    const leadLast = byAgent('lead').at(-1)!.conversation;
    expect(leadLast.userTexts.filter((t) => t.includes('Hello from the helper.'))).toHaveLength(1);
    expect(leadLast.userTexts.filter((t) => t.startsWith('[REVIEW REPORT from '))).toHaveLength(1);
    // The helper's first user turn carries its task assignment.
    expect(byAgent('worker')[0].conversation.userTexts[0]).toMatch(/^\[TASK ASSIGNMENT\][\s\S]*plan_task_id: hello[\s\S]*Greet your leader/);
    // Dipper's tools are offered directly; the shadow tools are not offered at all.
    for (const r of model.requests.filter((x) => x.agent)) {
      expect(r.tools).toEqual(expect.arrayContaining(['mcp__beidou__send_message', 'mcp__agentteam__task_list', 'mcp__isphere__isphere_send_message']));
      expect(r.tools.filter((t) => ['SendMessage', 'TodoWrite', 'AskUserQuestion'].includes(t))).toEqual([]);
    }
    // Every request reached the model with the operator's key, none with an agent's token.
    expect(new Set(model.requests.map((r) => r.apiKey))).toEqual(new Set([MODEL_KEY]));
    // Every inbox item was acknowledged once the session had it: the event log says each was taken in.
    const inputs = await stack.operator.events(run.run_id, 'agent_input');
    expect(inputs.filter((e) => e.agent_id === rootId).map((e) => e.data.kind).sort()).toEqual(['message', 'review_report']);

    // The approved helper got its terminate item and closed its session cleanly before exiting.
    const agentsDir = path.join(stack.env.DIPPER_DATA_DIR, 'runs', run.run_id, 'agents');
    const helperId = fs.readdirSync(agentsDir).find((a) => a !== rootId)!;
    const stderrOf = (agentId: string) => fs.readFileSync(path.join(agentsDir, agentId, 'stderr.log'), 'utf8');
    await eventually(async () => (stderrOf(helperId).includes('session closed after the terminate item') ? true : undefined), 30_000, 250);
    // Ending the run stops the lead's process too; no process is left.
    expect((await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' })).status).toBe(200);
    await eventually(async () => (fs.readdirSync(agentsDir).every((a) => !fs.existsSync(path.join(agentsDir, a, 'runtime.pid'))) ? true : undefined), 60_000, 250);
    for (const agentId of [rootId, helperId]) expect(stderrOf(agentId)).not.toContain(MODEL_KEY);
  }, 180_000);
});
