import type { Client } from '@temporalio/client';
import { agentWorkflowId } from '../../workflows/ids';
import { closeAll, connect, operator, startRun } from '../support/team';
import { eventually } from '../support/clients';
import { connectTemporal } from '../support/temporal';

/**
 * Legal calls at the largest sizes the limits allow must never push a
 * workflow past Temporal's payload limits. Later surfaces add their own
 * largest state here.
 */
let temporal: { client: Client; close: () => Promise<void> };
let client: Client;
beforeAll(async () => {
  temporal = await connectTemporal();
  client = temporal.client;
});
afterAll(async () => {
  await closeAll();
  await temporal.close();
});

async function failedTasks(runId: string, agentId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(agentWorkflowId(runId, agentId)).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '');
}

it('takes fifteen review reports of the largest size in a burst, and records every one', async () => {
  const { root, runId, rootId } = await startRun();
  const max = 256 * 1024;
  const detail = (i: number) => `[REVIEW REQUIRED] report ${i} `.padEnd(max, 'x');
  // At once, so they share one flush window: cut by count alone they made one 3.8 MB event write.
  await Promise.all(Array.from({ length: 15 }, (_, i) => root.ok('signal_review', { detail: detail(i) })));
  const reported = await eventually(async () => {
    const events = await operator.events(runId, 'completion.reported');
    return events.length >= 15 ? events : undefined;
  }, 30_000, 200);
  // Every report is recorded whole. A report can be recorded twice: a call whose answer the gateway did not get
  // in time is sent again, and after continue-as-new the new run cannot tell it was already applied.
  expect(new Set(reported.map((e) => (e.data.detail as string).split(' ')[3]))).toEqual(new Set(Array.from({ length: 15 }, (_, i) => String(i))));
  expect(reported.every((e) => (e.data.detail as string).length === max)).toBe(true);
  expect((await root.ok('list_peers', { scope: 'all' })).peers.length).toBe(1);
  expect(await failedTasks(runId, rootId)).toEqual([]);
  const again = await connect((await operator.launch(runId, rootId)).token);
  expect((await again.ok('list_peers', { scope: 'all' })).peers[0].status).toBe('review_pending');
}, 60_000);
