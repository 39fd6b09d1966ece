import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { openStores, type Stores } from '../../src/common/stores';
import { CONTENT_GONE } from '../../src/gateway/content';
import { sweepContent } from '../../src/worker/contentSweeper';
import { Temporal } from '../../src/temporal';
import { INLINE_TEXT_BYTES } from '../../src/common/pure/content';
import { runWorkflowId } from '../../workflows/ids';
import { eventually } from '../support/clients';
import { approve, closeAll, env, eventsOf, operator, spawn, startRun, task } from '../support/team';
import { connectTemporal } from '../support/temporal';

/** A first message without its closing [SKILLS] and [TASK BOARD] blocks. */
const taskOf = (first: string) => first.split(/\n\n\[(?:SKILLS|TASK BOARD)\]\n/)[0];

/**
 * Long text lives in the content store, not in workflow state: what goes
 * in, what a refused call leaves behind (nothing), and when it goes.
 */
let stores: Stores;
let store: Stores['content'];
let temporal: { client: Client; close: () => Promise<void> };
beforeAll(async () => {
  // The stack's own store: SQLite files, or PostgreSQL when the stack runs on one (`dipper cluster test`).
  stores = await openStores({ dataDir: env.dataDir, databaseUrl: env.processEnv.DIPPER_DATABASE_URL });
  store = stores.content;
  temporal = await connectTemporal();
});
afterAll(async () => {
  await closeAll();
  await stores.close();
  await temporal.close();
});

const max = 256 * 1024;

it('keeps short text inline and stores long text, once per call', async () => {
  const { root, runId, rootId } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a')] });
  const child = await spawn(root, runId, 'a');
  await child.client.ok('send_message', { to: rootId, content: 'x'.repeat(INLINE_TEXT_BYTES) });
  expect((await store.usage(runId)).pieces).toBe(0);
  await child.client.ok('signal_review', { detail: '[REVIEW REQUIRED] '.padEnd(INLINE_TEXT_BYTES + 1, 'y') });
  expect((await store.usage(runId))).toEqual({ pieces: 1, bytes: INLINE_TEXT_BYTES + 1 });
});

it('keeps nothing of a long text whose call was refused', async () => {
  const { root, runId, rootId } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
  const [a, b] = [await spawn(root, runId, 'a'), await spawn(root, runId, 'b')];
  await approve(root, b);
  const long = (what: string) => `[REVIEW REQUIRED] ${what} `.padEnd(max, 'z');
  const stored = (await store.usage(runId)).pieces;

  // Refused by the gateway before anything is stored, by the workflow after it was: neither keeps the text.
  expect((await a.client.fail('send_message', { to: 'ag_000000000000', content: long('nobody') })).code).toBe('unknown_recipient');
  expect((await a.client.fail('send_message', { to: b.agentId, content: long('ended') })).code).toBe('recipient_terminated');
  expect((await a.client.fail('signal_review', { detail: 'no envelope '.padEnd(max, 'z') })).code).toBe('envelope_missing');
  // A terminated agent's call meets agent_terminated until its token's revocation lands (well under a second), then 401.
  const late = await b.client.fail('signal_review', { detail: long('after the end') }).catch((err: Error) => ({ code: /token_revoked/.exec(err.message)?.[0] }));
  expect(['agent_terminated', 'token_revoked']).toContain(late.code);
  expect((await root.fail('send_message', { to: a.agentId, content: `${'x'.repeat(max)}!` })).code).toBe('invalid_input');
  expect((await store.usage(runId)).pieces).toBe(stored);

  // The same calls, accepted, keep theirs.
  await a.client.ok('send_message', { to: rootId, content: long('kept') });
  expect((await store.usage(runId)).pieces).toBe(stored + 1);
});

it("deletes a run's content once the run has closed and its retention passed, and readers are told it went", async () => {
  const ended = await startRun();
  const open = await startRun();
  for (const run of [ended, open]) await run.root.ok('signal_review', { detail: '[REVIEW REQUIRED] '.padEnd(max, 'r') });
  // Its event is written in the background; it is read back after the sweep.
  await eventsOf(ended.runId, 'completion.reported');
  expect((await store.usage(ended.runId)).pieces).toBe(1);
  expect((await operator.request('POST', `/runs/${ended.runId}/cancel`, {})).status).toBe(200);
  // The run workflow closes once its agents have ended.
  await eventually(async () => ((await temporal.client.workflow.getHandle(runWorkflowId(ended.runId)).describe()).closeTime ? true : undefined), 30_000);

  // Within the retention period, nothing goes; an open run's content never does.
  const keptFor = 3600_000;
  expect(await sweepContent(store, Temporal.over(temporal.client), { retentionMs: keptFor })).not.toContain(ended.runId);
  expect((await store.usage(ended.runId)).pieces).toBe(1);
  const later = Date.now() + keptFor + 1000;
  const swept = await sweepContent(store, Temporal.over(temporal.client), { retentionMs: keptFor }, later);
  expect(swept).toContain(ended.runId);
  expect(swept).not.toContain(open.runId);
  expect((await store.usage(ended.runId)).pieces).toBe(0);
  expect((await store.usage(open.runId)).pieces).toBe(1);

  expect((await operator.events(ended.runId, 'completion.reported'))[0].data.detail).toBe(CONTENT_GONE);
  expect(((await eventsOf(open.runId, 'completion.reported'))[0].data.detail as string).length).toBe(max);
});

it('stores long run tasks, plans and team charters once, and every reader gets the words', async () => {
  const long = (what: string, n = 100 * 1024) => `${what}: `.padEnd(n, what[0]);
  const runTask = long('Ship the whole product', 200 * 1024);
  const { root, runId } = await startRun(undefined, runTask);
  expect((await operator.request('GET', `/runs/${runId}`)).json.task).toBe(runTask);
  const before = (await store.usage(runId)).pieces;
  expect(before).toBe(1);

  // A plan of long task texts and descriptions: the child's launch and the plan file hold the words.
  const plan = await root.ok('declare_plan', {
    tasks: [
      { ...task('a'), task: long('alpha task'), description: long('alpha role') },
      { ...task('b'), task: long('beta task'), description: long('beta role') },
    ],
  });
  const child = await spawn(root, runId, 'a');
  expect(child.launch.first_message).toMatch(/^\[TASK ASSIGNMENT\]\nplan_task_id: a\n/);
  expect(taskOf(child.launch.first_message).endsWith(`[/TASK ASSIGNMENT]\n\n${long('alpha task')}`)).toBe(true);
  expect(child.launch.skill_body).toContain(long('alpha role'));
  const file = JSON.parse(fs.readFileSync(plan.plan_path, 'utf8'));
  expect(file.tasks.map((t: any) => [t.task, t.description])).toEqual([
    [long('alpha task'), long('alpha role')],
    [long('beta task'), long('beta role')],
  ]);
  expect((await store.usage(runId)).pieces).toBe(before + 4);

  // Equal long descriptions are one stored piece, so the workflow still sees they are equal; the refusal keeps nothing.
  const twins = { name: 'twins', task: long('charter'), roles: [0, 1].map((i) => ({ role: `r${i}`, skill: 'worker', description: long('same job') })) };
  expect((await root.fail('create_team', twins)).code).toBe('duplicate_member_descriptions');
  expect((await store.usage(runId)).pieces).toBe(before + 4);

  // A retry of the same create_team (its answer lost) is the same call, although its texts are stored again.
  const team = { ...twins, roles: [0, 1].map((i) => ({ role: `r${i}`, skill: 'worker', description: long(`job ${i}`) })) };
  const first = await root.ok('create_team', team);
  expect(await root.ok('create_team', team)).toEqual(first);
  const member = await operator.launch(runId, first.members[1].agent_id);
  expect(taskOf(member.first_message)).toBe(runTask);
  expect(member.skill_body).toContain(long('job 1'));
});

it("stores a human's long rework text for the root, who reads it whole", async () => {
  const { root, runId } = await startRun();
  await root.ok('signal_review', { detail: '[REVIEW REQUIRED] first draft' });
  const text = 'Redo the second half. '.padEnd(200 * 1024, 'r');
  const before = (await store.usage(runId)).pieces;
  const decided = await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'review', verdict: 'rework', text });
  expect(decided.status).toBe(200);
  expect((await store.usage(runId)).pieces).toBe(before + 1);
  const item = await eventually(async () => (await root.inbox(0, 0)).messages.find((m: any) => m.kind === 'system'));
  expect(item.content).toBe(`rework: ${text}`);
  // A decision refused (nothing pending any more) keeps nothing.
  expect((await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'review', verdict: 'rework', text })).status).toBe(409);
  expect((await store.usage(runId)).pieces).toBe(before + 1);
});
