import type { Client } from '@temporalio/client';
import { CALL_STEP } from '../../workflows/host';
import { agentWorkflowId } from '../../workflows/ids';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { connectTemporal } from '../support/temporal';

/**
 * A leader's background work (measuring its teams' workspaces) fails every
 * attempt, injected through DIPPER_FAULTS on a stack of its own. The failure
 * is recorded and the loop goes on; the agent's workflow never fails a task
 * and keeps answering calls.
 */
let stack: Stack;
let temporal: { client: Client; close: () => Promise<void> };
const clients: AgentClient[] = [];

beforeAll(async () => {
  stack = await startStack('faults', 28840, { DIPPER_FAULTS: 'watchWorkspaces' });
  temporal = await connectTemporal();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
  await temporal?.close();
});

it('records a background loop\'s failures and keeps the agent answering', async () => {
  const res = await stack.operator.request('POST', '/runs', { task: 'Grow a team.', limits: { workspace_check_seconds: 1 } });
  const { run_id: runId, root } = res.json;
  const lead = await AgentClient.connect(stack.gatewayUrl, root.agent_token);
  clients.push(lead);
  await lead.ok('declare_plan', { tasks: [{ id: 'a', role: 'a-role', skill: 'worker', task: 'Do a.', depends_on: [] }] });
  const { team_id: teamId, agent_id: childId } = await lead.ok('spawn_agent', { task_id: 'a' });

  // A watch fails its three attempts (about 3 s of retries), then the next watch comes after a backed-off pause.
  const failures = await eventually(async () => {
    const seen = await stack.operator.events(runId, 'watchdog.exception');
    return seen.length >= 2 ? seen : undefined;
  }, 30_000, 200);
  expect(failures[0].data).toEqual({ watcher: 'workspace_budget', team_ids: [teamId], message: 'fault injected into watchWorkspaces (DIPPER_FAULTS)' });

  expect((await lead.ok('list_peers', {})).peers.length).toBeGreaterThan(0);
  await lead.ok('send_message', { to: childId, content: 'still here' });
  const history = await temporal.client.workflow.getHandle(agentWorkflowId(runId, root.agent_id)).fetchHistory();
  const failedTasks = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes);
  expect(failedTasks.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message)).toEqual([]);
}, 60_000);

describe('an event log that cannot be written', () => {
  let down: Stack;
  beforeAll(async () => {
    // The plan file cannot be written either: a step inside a tool call that fails every attempt.
    down = await startStack('eventsdown', 28860, { DIPPER_FAULTS: 'recordEvents,writePlanFile' });
  }, 60_000);
  afterAll(async () => down?.stop());

  it('answers a call whose own step keeps failing with a retryable unavailable, soon, and keeps nothing of it', async () => {
    const res = await down.operator.request('POST', '/runs', { task: 'Plan while the disk fails.' });
    const lead = await AgentClient.connect(down.gatewayUrl, res.json.root.agent_token);
    clients.push(lead);
    const refused = await lead.fail('declare_plan', { tasks: [{ id: 'a', role: 'a-role', skill: 'worker', task: 'Do a.', depends_on: [] }] });
    expect(refused).toMatchObject({ code: 'unavailable', retryable: true, retry_after_ms: expect.any(Number), message: expect.stringMatching(/^A step of this call/) });
    // The answer is the step's, not a timeout's: the workflow gave the step up after its own last attempt
    // (CALL_STEP's retry policy), once, before the call's deadline could end the call some other way.
    const history = await temporal.client.workflow.getHandle(agentWorkflowId(res.json.run_id, res.json.root.agent_id)).fetchHistory();
    const events = history.events ?? [];
    const byId = new Map(events.map((e) => [String(e.eventId), e]));
    const planSteps = events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writePlanFile')
      .map((scheduled) => {
        const failed = events.find((e) => String(e.activityTaskFailedEventAttributes?.scheduledEventId) === String(scheduled.eventId))?.activityTaskFailedEventAttributes;
        return { attempt: byId.get(String(failed?.startedEventId))?.activityTaskStartedEventAttributes?.attempt, failed: failed?.failure?.message };
      });
    expect(planSteps).toEqual([{ attempt: CALL_STEP.retry?.maximumAttempts, failed: expect.stringContaining('writePlanFile') }]);
    expect((await lead.fail('list_ready', {})).code).toBe('no_active_plan');
  }, 60_000);

  it('holds back calls that would add events, keeps reads answering, and loses nothing once it is back', async () => {
    const res = await down.operator.request('POST', '/runs', { task: 'Report while the log is down.' });
    const { run_id: runId, root } = res.json;
    const lead = await AgentClient.connect(down.gatewayUrl, root.agent_token);
    clients.push(lead);
    // Each report leaves about 1.2 KB of unwritten events in the root's workflow; past what continue-as-new may carry, calls are refused.
    // Sent ten at a time: one by one, the hundreds of calls this takes outlasted the test on a busy machine.
    const detail = (i: number) => `[REVIEW REQUIRED] report ${i} `.padEnd(1000, '.');
    let accepted = 0;
    let refusal: any;
    for (let next = 0; !refusal && next < 400; next += 10) {
      const outs = await Promise.all(Array.from({ length: 10 }, (_, k) => lead.call('signal_review', { detail: detail(next + k) })));
      for (const out of outs) {
        if (out.isError) refusal ??= out.error;
        else accepted++;
      }
    }
    expect(refusal).toMatchObject({ code: 'unavailable', retryable: true });
    expect(accepted).toBeGreaterThan(50);
    // Reads do not add events: they go on.
    expect((await lead.ok('list_peers', { scope: 'all' })).peers).toHaveLength(1);
    expect(await down.operator.events(runId)).toEqual([]);

    // The log comes back (a worker without the fault): the backlog is written and calls are taken again.
    delete down.env.DIPPER_FAULTS;
    await down.restartWorker();
    await eventually(async () => ((await lead.call('signal_review', { detail: detail(1000) })).isError ? undefined : true), 60_000, 500);
    accepted++;
    const reported = await eventually(async () => {
      const events = await down.operator.events(runId, 'completion.reported');
      return events.length >= accepted ? events : undefined;
    }, 30_000, 200);
    expect(new Set(reported.map((e) => e.data.detail)).size).toBe(accepted);
    const history = await temporal.client.workflow.getHandle(agentWorkflowId(runId, root.agent_id)).fetchHistory();
    expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  }, 120_000);
});
