import { Client, Connection } from '@temporalio/client';
import { temporalTargetOf } from '../support/temporal';
import { agentWorkflowId, runWorkflowId } from '../../workflows/ids';
import { closeAll, env, spawn, startRun, task } from '../support/team';

/**
 * A worker killed while it holds a workflow task leaves that workflow
 * waiting this timeout (src/common/pure/limits.ts): every workflow of a run must
 * carry Dipper's, not the server's default, and a member must inherit its
 * leader's.
 */
let connection: Connection;
beforeAll(async () => {
  connection = await Connection.connect(temporalTargetOf(env));
});
afterAll(async () => {
  await closeAll();
  await connection.close();
});

function ms(d: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  return d ? Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6) : undefined;
}

it('gives the run, its root and a spawned member the configured workflow task timeout, not the server default', async () => {
  // The shared stack's (test/setup/globalSetup.ts): not the server's 10 s, or a workflow that lost it would pass.
  const configured = Number(env.processEnv.DIPPER_WORKFLOW_TASK_TIMEOUT_MS);
  expect(configured).not.toBe(10_000);
  const { root, runId, rootId } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a')] });
  const member = await spawn(root, runId, 'a');
  const client = new Client({ connection, namespace: env.namespace });
  const ids = [runWorkflowId(runId), agentWorkflowId(runId, rootId), agentWorkflowId(runId, member.agentId)];
  const timeouts = await Promise.all(ids.map(async (id) => ms((await client.workflow.getHandle(id).describe()).raw.executionConfig?.defaultWorkflowTaskTimeout)));
  expect(timeouts).toEqual(ids.map(() => configured));
});
