import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { readTestEnv, testDataRoot } from '../setup/env';
import { connectTemporal } from '../support/temporal';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { TaskProxy } from '../support/taskProxy';

/**
 * The Task API as it fails in the field, between a stack of its own and the
 * shared Task service: an expired token, and a change that took effect
 * while its answer was lost.
 */
const base = readTestEnv();
const proxy = new TaskProxy(`http://127.0.0.1:${base.processEnv.DIPPER_TASK_SERVICE_PORT}`);
let stack: Stack;
const clients: AgentClient[] = [];

beforeAll(async () => {
  const url = await proxy.start();
  stack = await startStack('tasks', 28762, { DIPPER_TASK_API_URL: url, DIPPER_TASK_REQUEST_TIMEOUT_MS: '1500' });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
  await proxy.stop();
});

async function root() {
  const res = await stack.operator.request('POST', '/runs', { task: 'Keep the board.' });
  const run = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  // The stack's gateway may still be confirming tokens right after it started.
  const tasks = await eventually(() => AgentClient.connect(stack.gatewayUrl, run.root.agent_token, 'agentteam').catch(() => undefined), 20_000, 250);
  clients.push(tasks);
  return { runId: run.run_id, rootId: run.root.agent_id, tasks };
}

it('makes one request per call, and after a 401 refreshes the agent token once and repeats the same request once', async () => {
  const { runId, tasks } = await root();
  const made = await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Before expiry' }] });
  const before = proxy.runtime().length;
  await tasks.ok('task_get', { channel: runId, number: made.tasks[0].number });
  expect(proxy.runtime().length).toBe(before + 1);

  proxy.expireNext();
  const from = proxy.seen.length;
  const listed = await tasks.ok('task_list', { channel: runId });
  expect(listed.items.map((t: { title: string }) => t.title)).toEqual(['Before expiry']);
  const after = proxy.seen.slice(from);
  expect(after.map((s) => [s.method, s.path.split('?')[0].replace(/.*\/agents\/[^/]+/, ''), s.status])).toEqual([
    ['GET', '/runtime/tasks', 401],
    ['POST', '/tokens/refresh', 200],
    ['GET', '/runtime/tasks', 200],
  ]);
  // The repeat carried the agent's new token: never the refresh token, never the admin key, never the old one.
  expect(after[2].bearer).not.toBe(after[0].bearer);
  expect(after[1].bearer).toBeUndefined();
  expect(proxy.runtime().every((s) => s.bearer !== base.processEnv.DIPPER_TASK_ADMIN_KEY)).toBe(true);
});

it('answers task_outcome_unknown when a change took effect but its answer was lost, and does not send it again', async () => {
  const { runId, tasks } = await root();
  const n = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Checkpointed' }] })).tasks[0].number;
  proxy.swallowNext('/add-checkpoint');
  const refused = await tasks.fail('task_checkpoint', { channel: runId, number: n, summary: 'Reached the milestone.' });
  expect(refused).toMatchObject({
    code: 'task_outcome_unknown',
    retryable: false,
    suggested_action: { tool: 'task_get', arguments: { channel: runId, number: n } },
  });
  // It happened exactly once: the checkpoint is there, and it was sent once.
  expect((await tasks.ok('task_get', { channel: runId, number: n })).checkpoint_count).toBe(1);
  expect(proxy.seen.filter((s) => s.path.endsWith('/add-checkpoint'))).toHaveLength(1);
});

it('repeats a keyed create whose answer was lost, and its receipt keeps it to one task', async () => {
  const { runId, rootId, tasks } = await root();
  proxy.swallowNext('/runtime/tasks');
  const created = await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Keyed once' }], idempotency_key: 'lost-answer' });
  // The first request made it; the repeat was answered from the receipt.
  expect(created.reused).toBe(true);
  expect(proxy.seen.filter((s) => s.method === 'POST' && s.path.endsWith(`/agents/${rootId}/runtime/tasks`))).toHaveLength(2);
  expect((await tasks.ok('task_list', { channel: runId })).items.map((t: { number: number }) => t.number)).toEqual([created.tasks[0].number]);
});

it("keeps every agent's Task API token out of workflow histories, events and logs", async () => {
  const { runId, tasks } = await root();
  const n = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Secret keeping' }], idempotency_key: 'secrets' })).tasks[0].number;
  await tasks.ok('task_update', { channel: runId, number: n, status: 'done' });
  const tokens = [...new Set(proxy.seen.map((s) => s.bearer).filter((b): b is string => !!b))];
  expect(tokens.length).toBeGreaterThan(0);
  const temporal = await connectTemporal();
  try {
    // The run and its root at least (task changes leave no workflow), once Temporal's visibility lists them.
    const listed = await eventually(async () => {
      const found: { workflowId: string; runId: string }[] = [];
      for await (const wf of temporal.client.workflow.list({ query: `DipperRunId = '${runId}'` })) found.push(wf);
      return found.length >= 2 ? found : undefined;
    });
    const texts: string[] = [];
    for (const wf of listed) texts.push(historyToJSON(await temporal.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()));
    texts.push(JSON.stringify(await stack.operator.events(runId)));
    for (const log of fs.readdirSync(testDataRoot).filter((f) => f.startsWith('tasks-') && f.endsWith('.log'))) texts.push(fs.readFileSync(path.join(testDataRoot, log), 'utf8'));
    for (const text of texts) for (const token of tokens) expect(text.includes(token)).toBe(false);
    // Nor the admin key that issues them.
    for (const text of texts) expect(text.includes(base.processEnv.DIPPER_TASK_ADMIN_KEY)).toBe(false);
  } finally {
    await temporal.close();
  }
});
