import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { diagnose, repair } from '../../src/ops/doctor';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { deliverMessagesUpdate, inboxQuery } from '../../workflows/agent/messages';
import { agentWorkflowId } from '../../workflows/ids';
import { readTestEnv } from '../setup/env';
import { AgentClient, eventually } from '../support/clients';
import { skipReplayOf } from '../support/replaySkip';
import { startStack, type Stack } from '../support/stack';

/**
 * The kill -9 nondeterminism, reproduced on purpose, then repaired by
 * `dipper doctor`. A worker dies while each agent's event-write timer runs;
 * a Query reaches the agent before the timer fires, the timer fires, an
 * Update arrives, and a fresh worker starts. Queries sent straight to
 * Temporal without a deadline (what the gateway did before) reach the fresh
 * worker ahead of the workflow task and break some agents; the same Queries
 * through today's gateway break none.
 */
let stack: Stack;
let connection: Connection;
let client: Client;
const agents: AgentClient[] = [];
beforeAll(async () => {
  installQuietRuntime();
  stack = await startStack('doctor', 28790, { DIPPER_STICKY_TIMEOUT_MS: '2000' });
  connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  client = new Client({ connection, namespace: 'dipper' });
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await stack?.stop();
  await connection?.close();
});

interface Subject {
  runId: string;
  agentId: string;
  agent: AgentClient;
  handle: WorkflowHandle;
  direct: boolean;
}

async function subject(direct: boolean): Promise<Subject> {
  const run = await stack.operator.startRun('Be broken and mended.');
  const agent = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
  agents.push(agent);
  const workflowId = agentWorkflowId(run.run_id, run.root.agent_id);
  if (direct) skipReplayOf({ runId: run.run_id, reason: 'broken on purpose by the doctor test; the test replays the repaired run itself' });
  return { runId: run.run_id, agentId: run.root.agent_id, agent, handle: client.workflow.getHandle(workflowId), direct };
}

/** A delivery straight to the workflow; an Update a worker lost in its crash is sent again under the same id. */
async function deliver(s: Subject, content: string): Promise<void> {
  const updateId = randomUUID();
  const messages = [{ message_id: randomUUID(), from_agent_id: s.agentId, from_run_id: s.runId, content }];
  for (;;) {
    try {
      await s.handle.executeUpdate(deliverMessagesUpdate, { args: [{ messages }], updateId });
      return;
    } catch (err) {
      if (!/wasn't processed by worker/.test(String((err as { cause?: unknown }).cause))) throw err;
    }
  }
}

async function nondeterministic(s: Subject, runId?: string): Promise<boolean> {
  const history = await client.workflow.getHandle(s.handle.workflowId, runId).fetchHistory();
  return Worker.runReplayHistory({ workflowBundle: { codePath: readTestEnv().bundlePath } }, history).then(
    () => false,
    () => true,
  );
}

it('reproduces the kill -9 nondeterminism with unbounded Queries, not through the gateway, and doctor --repair mends it with the inbox intact', async () => {
  const direct = await Promise.all(Array.from({ length: 8 }, () => subject(true)));
  const gated = await Promise.all(Array.from({ length: 4 }, () => subject(false)));
  const all = [...direct, ...gated];

  // Each delivery starts the agent's 300 ms event-write window; the worker dies inside it.
  await Promise.all(all.map((s) => deliver(s, 'before the crash')));
  await stack.worker.kill('SIGKILL');
  const reads = all.map((s) =>
    s.direct ? s.handle.query(inboxQuery, { after: 0, limit: 10 }).catch(() => undefined) : s.agent.inbox(0, 0).catch(() => undefined),
  );
  // The window closes: a workflow task is pending on the dead worker's queue.
  await eventually(async () => ((await Promise.all(all.map((s) => s.handle.describe()))).every((d) => d.raw.pendingWorkflowTask) ? true : undefined), 20_000);
  const lateDeliveries = all.map((s) => deliver(s, 'during the outage'));
  // The server gives up on the dead worker's sticky queue.
  await eventually(async () => {
    const histories = await Promise.all(all.map((s) => s.handle.fetchHistory()));
    return histories.every((h) => h.events?.some((e) => e.workflowTaskTimedOutEventAttributes)) ? true : undefined;
  }, 20_000);
  await stack.restartWorker();
  await Promise.all([...reads, ...lateDeliveries]);

  // Replay checks a task's commands once a later task exists: wait for the one that follows the event write.
  await eventually(async () => {
    const histories = await Promise.all(all.map((s) => s.handle.fetchHistory()));
    const settled = histories.every((h) => {
      const events = h.events ?? [];
      const accepted = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).at(-1);
      return events.some((e) => e.workflowTaskCompletedEventAttributes && Number(e.eventId) > Number(accepted?.eventId));
    });
    return settled ? true : undefined;
  }, 20_000);
  const broken: Subject[] = [];
  for (const s of direct) if (await nondeterministic(s)) broken.push(s);
  expect(broken.length).toBeGreaterThan(0);
  for (const s of gated) expect(await nondeterministic(s)).toBe(false);

  const opts = { client, namespace: 'dipper', bundlePath: readTestEnv().bundlePath };
  const findings = (await diagnose(opts)).findings.filter((f) => f.kind === 'nondeterministic');
  expect(findings.map((f) => f.workflowId).sort()).toEqual(broken.map((s) => s.handle.workflowId).sort());
  for (const f of findings) {
    expect(f.resetEventId).toBeGreaterThan(0);
    await repair(opts, f);
  }

  for (const s of broken) {
    const current = await s.handle.describe();
    expect(current.runId).not.toBe(findings.find((f) => f.workflowId === s.handle.workflowId)!.runId);
    expect(await nondeterministic(s, current.runId)).toBe(false);
    // The agent answers, and its inbox holds both messages once, in order.
    const inbox = await eventually(async () => {
      const view = await s.agent.inbox(0, 0).catch(() => undefined);
      return view && view.messages.length >= 2 ? view : undefined;
    }, 30_000);
    expect(inbox.messages.map((m: { content: string }) => m.content)).toEqual(['before the crash', 'during the outage']);
    expect(Array.isArray((await s.agent.ok('list_peers', {})).peers)).toBe(true);
  }
}, 180_000);
