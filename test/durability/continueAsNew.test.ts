import { Client, Connection } from '@temporalio/client';
import { temporalTargetOf } from '../support/temporal';
import { declarePlanUpdate, spawnAgentUpdate } from '../../workflows/agent/messages';
import { agentWorkflowId, runWorkflowId } from '../../workflows/ids';
import { eventually } from '../support/clients';
import { closeAll, env, operator, spawn, startRun, task } from '../support/team';
import { connectTemporal } from '../support/temporal';

afterAll(closeAll);

async function executions(client: Client, workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) n++;
  return n;
}

describe('continue-as-new', () => {
  it('carries inbox, plan, reviews and the directory across new runs without losing a message', async () => {
    const connection = await Connection.connect(temporalTargetOf(env));
    const client = new Client({ connection, namespace: env.namespace });
    try {
      const { root, runId, rootId } = await startRun({ continue_as_new_events: 120 });
      await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a'])] });
      const child = await spawn(root, runId, 'a');

      const sent: string[] = [];
      for (let i = 0; i < 60; i++) {
        sent.push((await root.ok('send_message', { to: child.agentId, content: `m${i}` })).message_id);
        if (i === 30) {
          // Acknowledge part of the inbox midway; the rest must survive the hand-over.
          const view = await child.client.inbox(0, 0);
          await child.client.ack(view.messages[9].seq);
        }
      }
      await child.client.ok('signal_review', { detail: '[REVIEW REQUIRED] after many messages' });

      const view = await child.client.inbox(0, 0);
      const messages = view.messages.filter((m) => m.kind === 'message');
      expect(messages.map((m) => m.message_id)).toEqual(sent.slice(10));
      expect(messages.map((m) => m.seq)).toEqual([...messages.map((m) => m.seq)].sort((a, b) => a - b));

      // Its second run, as Temporal's visibility lists it a moment after it starts.
      await eventually(async () => ((await executions(client, agentWorkflowId(runId, child.agentId))) > 1 ? true : undefined));
      expect((await root.ok('list_pending_reviews')).items.map((r: any) => r.agent_id)).toEqual([child.agentId]);
      // The review carried through continue-as-new still keeps the root to the review tools.
      expect((await root.fail('list_ready')).code).toBe('review_gate_denied');
      const { agents } = (await operator.request('GET', `/runs/${runId}/agents`)).json;
      expect(agents.map((p: any) => p.agent_id).sort()).toEqual([rootId, child.agentId].sort());

      // Status churn (review, acknowledgement, review...) piles signals into the run workflow; it moves on too.
      for (let i = 0; i < 40; i++) {
        await root.ok('send_message', { to: child.agentId, content: `ack ${i}` });
        await child.client.ok('signal_review', { detail: `[ITERATION READY] ${i}` });
      }
      await root.ok('terminate_child', { agent_id: child.agentId });
      expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });
      await eventually(async () => ((await executions(client, runWorkflowId(runId))) > 1 ? true : undefined));
      const peers = (await root.ok('list_peers', { scope: 'children' })).peers;
      expect(peers).toEqual([expect.objectContaining({ agent_id: child.agentId })]);
    } finally {
      await connection.close();
    }
  }, 150_000);
});

describe('an Update sent again after continue-as-new', () => {
  it('gets the answer the previous run gave, and is not applied twice', async () => {
    const temporal = await connectTemporal();
    const client = temporal.client;
    try {
      const { root, runId, rootId } = await startRun({ continue_as_new_events: 100 });
      const workflowId = agentWorkflowId(runId, rootId);
      const handle = client.workflow.getHandle(workflowId);
      // As a gateway sends them: its own update ids, the same id again when an answer was lost.
      const plan = { tasks: [task('a'), task('b')] };
      const declared = await handle.executeUpdate(declarePlanUpdate, { args: [plan], updateId: 'declare-once' });
      const spawned = await handle.executeUpdate(spawnAgentUpdate, { args: [{ task_id: 'a' }], updateId: 'spawn-once' });

      // The workflow moves on to a new run before the answers' senders try again.
      for (let i = 0; (await executions(client, workflowId)) < 2; i++) {
        if (i > 100) throw new Error('the root never continued as new');
        await root.ok('signal_review', { detail: `[ITERATION READY] filler ${i}` });
      }
      expect(await handle.executeUpdate(declarePlanUpdate, { args: [plan], updateId: 'declare-once' })).toEqual(declared);
      expect(await handle.executeUpdate(spawnAgentUpdate, { args: [{ task_id: 'a' }], updateId: 'spawn-once' })).toEqual(spawned);
      // Once: one child, and a new call with the same input is judged as a new call.
      expect((await root.ok('list_peers', { scope: 'children' })).peers.map((p: any) => p.agent_id)).toEqual([spawned.agent_id]);
      await expect(handle.executeUpdate(declarePlanUpdate, { args: [plan], updateId: 'declare-twice' })).rejects.toMatchObject({
        cause: { type: 'plan_already_declared' },
      });
    } finally {
      await temporal.close();
    }
  });
});
