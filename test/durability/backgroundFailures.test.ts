import type { Client } from '@temporalio/client';
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
  stack = await startStack('faults', 28840, { DIPPER_FAULTS: 'workspaceBytes' });
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

  // Three failed attempts (about 1.5 s of retries) after the first check, then the next round, backed off.
  const failures = await eventually(async () => {
    const seen = await stack.operator.events(runId, 'watchdog.exception');
    return seen.length >= 2 ? seen : undefined;
  }, 30_000, 200);
  expect(failures[0].data).toEqual({ watcher: 'workspace_budget', team_id: teamId, message: 'fault injected into workspaceBytes (DIPPER_FAULTS)' });

  expect((await lead.ok('list_peers', {})).peers.length).toBeGreaterThan(0);
  await lead.ok('send_message', { to: childId, content: 'still here' });
  const history = await temporal.client.workflow.getHandle(agentWorkflowId(runId, root.agent_id)).fetchHistory();
  const failedTasks = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes);
  expect(failedTasks.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message)).toEqual([]);
}, 60_000);
