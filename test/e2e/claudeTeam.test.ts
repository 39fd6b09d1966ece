import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { startStack, type Stack } from '../support/stack';
import { temporalForFile } from '../support/temporal';
import { sim } from '../isphere/support';
import { playThePerson } from '../../src/cli/demoPerson';
import { startScriptedModel, type ScriptedModel } from '../../src/model/scripted/server';
import { SUMMARY, SUMMARY_TO, teamScripts } from '../../src/model/scripted/team';

/**
 * The whole team of issue 22 on real Claude sessions (the `claude` runtime,
 * the CLI the Agent SDK ships) and the scripted model, offline: a lead, a
 * researcher and a writer that message, ask, escalate, publish on iSphere
 * with a person's approval, hand in, rework, and end the run with the
 * person's consent. A person (this test) answers, approves and ends.
 */
let model: ScriptedModel;
let stack: Stack;
const temporal = temporalForFile();
beforeAll(async () => {
  model = await startScriptedModel(teamScripts);
  stack = await startStack('claude-team', 28925, {
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'claude' } }),
    DIPPER_MODEL_UPSTREAM_URL: model.url,
    DIPPER_MODEL_API_KEY: 'sk-team-test-key',
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await model?.close();
});

const status = async (runId: string) => (await stack.operator.request('GET', `/runs/${runId}`)).json.status as string;

async function runTeam(duringWork?: (runId: string, rootId: string) => Promise<void>) {
  await sim.control('POST', '/reset', {});
  const run = (await stack.operator.request('POST', '/runs', { task: 'Research the topic and write a short piece about it.', root_skill: 'lead' })).json;
  // Before the person comes: the run cannot end without them, so its lead is still at work.
  await duringWork?.(run.run_id, run.root.agent_id);
  // The demo's person: answers, approves, lets the run end, and returns once it has completed.
  const said: string[] = [];
  const person = playThePerson(stack.operator, run.run_id, (line) => said.push(line));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`the run did not complete; the person did: ${said.join('; ')}`)), 180_000)));
  await Promise.race([person, late]).finally(() => clearTimeout(timer));
  expect(await status(run.run_id)).toBe('completed');
  return { runId: run.run_id as string, rootId: run.root.agent_id as string, person: said };
}

async function checkTeamWork(runId: string, rootId: string) {
  // Events are written by activities a moment after what they record: wait for the last agent's end to be in.
  const events = await eventually(async () => {
    const all = await stack.operator.events(runId);
    return all.filter((e) => e.type === 'agent_completed').length === 3 ? all : undefined;
  }, 30_000, 250);
  const of = (type: string) => events.filter((e) => e.type === type);
  const members = of('agent_spawned').filter((e) => e.data.plan_task_id);
  expect(members.map((e) => e.data.plan_task_id).sort()).toEqual(['research', 'write']);
  const writer = members.find((e) => e.data.plan_task_id === 'write')!.data.agent_id;
  const researcher = members.find((e) => e.data.plan_task_id === 'research')!.data.agent_id;
  expect(of('plan_declared')).toHaveLength(1);
  // Questions: the writer's answered by the lead, the researcher's escalated and answered by the person.
  const answered = of('question_answered');
  expect(answered.map((e) => [e.agent_id, e.data.by === rootId ? 'lead' : String(e.data.by).startsWith('operator') ? 'person' : e.data.by]).sort()).toEqual(
    [[researcher, 'person'], [writer, 'lead']].sort(),
  );
  // Reviews: the writer handed in twice (sent back once), the researcher once; each approved after its last report.
  const reports = of('completion.reported');
  expect(reports.filter((e) => e.agent_id === writer)).toHaveLength(2);
  expect(reports.filter((e) => e.agent_id === researcher)).toHaveLength(1);
  expect(of('review.acknowledged').map((e) => e.agent_id)).toEqual([writer]);
  const approvals = of('completion.approved').filter((e) => [writer, researcher].includes(e.data.target));
  expect(approvals.map((e) => e.data.target).sort()).toEqual([writer, researcher].sort());
  const lastReport = (who: string) => Math.max(...reports.filter((e) => e.agent_id === who).map((e) => e.ts));
  for (const a of approvals) expect(a.ts).toBeGreaterThan(lastReport(a.data.target));
  // The summary reached iSphere exactly once, with a person's approval.
  const summarySha = createHash('sha256').update(SUMMARY, 'utf8').digest('hex');
  expect((await sim.deliveries()).filter((d) => (d as { content_sha256?: string }).content_sha256 === summarySha)).toEqual([expect.objectContaining({ target_id: SUMMARY_TO })]);
  expect(of('isphere.approval_approved')).toHaveLength(1);
  // Messages went both ways between the members, and to the lead.
  const sends = of('send_message');
  expect(sends.filter((e) => e.agent_id === researcher && e.data.to === writer)).toHaveLength(1);
  expect(sends.filter((e) => e.agent_id === writer && e.data.to === researcher)).toHaveLength(1);
  expect(sends.filter((e) => e.data.to === rootId)).toHaveLength(2);
}

/** Gone, or a zombie: the kill took, whether or not anything has reaped it yet. */
function ended(pid: number): boolean {
  try {
    return /^\S+ \(.*\) [ZX]/s.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** The turns each agent's model heard, by the agent's plan task (the lead: "lead"). */
function heard() {
  const last = new Map<string, string[]>();
  for (const r of model.requests.filter((x) => x.agent)) {
    const first = r.conversation.userTexts[0] ?? '';
    const who = /plan_task_id: (\S+)/.exec(first)?.[1] ?? 'lead';
    if ((last.get(who)?.length ?? 0) <= r.conversation.userTexts.length) last.set(who, r.conversation.userTexts);
  }
  return last;
}

describe('a team of Claude agents', () => {
  it('plans, messages, asks, escalates, publishes with approval, reworks and ends the run with the person', async () => {
    const { runId, rootId, person: did } = await runTeam();
    await checkTeamWork(runId, rootId);
    expect(did.filter((d) => d.startsWith('the person answers'))).toHaveLength(1);
    expect(did).toContain('the person lets the run end');
    // What each agent process took in, each once: its inbox as user turns.
    const turns = heard();
    // Occurrences, not turns: items fed while a turn runs may reach the model as one user turn, one per line block.
    const count = (who: string, pattern: RegExp) => (turns.get(who) ?? []).join('\n').match(new RegExp(pattern.source, 'gm'))?.length ?? 0;
    expect(count('write', /^\[MESSAGE from \S+\]\nFindings:/)).toBe(1);
    expect(count('write', /^\[MESSAGE from \S+\]\nRework:/)).toBe(1);
    expect(count('research', /^\[ISPHERE APPROVAL\]/)).toBe(1);
    expect(count('lead', /^\[REVIEW REPORT from /)).toBe(3);
    expect(count('lead', /\[INBOX QUESTION\]/)).toBe(2);
    await untilNothingRunning(temporal.client, stack.env.DIPPER_DATA_DIR, runId, 60_000);
  }, 300_000);

  it('still finishes when the worker and an agent process are killed mid-run', async () => {
    let killed = '';
    const { runId, rootId } = await runTeam(async (id, rootId) => {
      // Once the lead has its team at work: the worker and the lead's process die. The lead, not a member: a member can
      // hand in, be approved and end before the kill lands (its crash then rightly ignored); the lead cannot end before
      // the person, who comes only after the kill, lets the run end.
      const members = async () => (await stack.operator.events(id, 'agent_spawned')).filter((e) => e.data.plan_task_id).length;
      await eventually(async () => ((await members()) === 2 ? true : undefined), 120_000, 250);
      const pidFile = path.join(stack.env.DIPPER_DATA_DIR, 'runs', id, 'agents', rootId, 'runtime.pid');
      const pid = Number(fs.readFileSync(pidFile, 'utf8').split(' ')[0]);
      // The process dies while no worker watches it: the next worker finds its pid file and reports the crash.
      await stack.restartWorker('SIGKILL', async () => {
        process.kill(-pid, 'SIGKILL');
        await eventually(async () => ended(pid) || undefined, 30_000, 50);
      });
      killed = rootId;
    });
    await checkTeamWork(runId, rootId);
    expect((await stack.operator.events(runId, 'agent_crashed')).map((e) => e.agent_id)).toEqual([killed]);
    await untilNothingRunning(temporal.client, stack.env.DIPPER_DATA_DIR, runId, 60_000);
  }, 300_000);
});
