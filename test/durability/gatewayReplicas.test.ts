import { AgentClient } from '../support/clients';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
let second: string;
const clients: AgentClient[] = [];
beforeAll(async () => {
  stack = await startStack('replicas', 28740);
  second = await stack.addGateway(28741);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
});

async function via(url: string, token: string): Promise<AgentClient> {
  const c = await AgentClient.connect(url, token);
  clients.push(c);
  return c;
}

describe('two gateway processes', () => {
  it('serve the same run interchangeably: state lives in Temporal, not in either gateway', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'replicas' })).json;
    const rootA = await via(stack.gatewayUrl, run.root.agent_token);
    const rootB = await via(second, run.root.agent_token);

    await rootA.ok('declare_plan', { tasks: [{ id: 't', role: 'dev', skill: 'worker', task: 'Do t.' }] });
    // The plan declared through A is the plan B sees and spawns from.
    expect(await rootB.ok('list_ready')).toEqual({ ready: ['t'] });
    const child = await rootB.ok('spawn_agent', { task_id: 't' });
    expect((await rootA.fail('spawn_agent', { task_id: 't' })).code).toBe('task_not_pending');

    const token = (await stack.operator.launch(run.run_id, child.agent_id)).token;
    const childA = await via(stack.gatewayUrl, token);
    const childB = await via(second, token);

    // A long poll held open on one replica is answered by a send through the other.
    const poll = childA.inbox(0, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    const sent = await rootB.ok('send_message', { to: child.agent_id, content: 'from B' });
    const got = await poll;
    expect(got.messages.map((m) => m.message_id)).toEqual([sent.message_id]);

    // Acknowledged on B, gone on A.
    await childB.ack(got.messages[0].seq);
    expect((await childA.inbox(0, 0)).messages).toEqual([]);

    await childA.ok('signal_review', { detail: '[REVIEW REQUIRED] done' });
    expect((await rootB.ok('list_pending_reviews')).items.map((r: any) => r.agent_id)).toEqual([child.agent_id]);
    expect(await rootA.ok('terminate_child', { agent_id: child.agent_id })).toEqual({ sentinel_posted: true });
    expect((await rootB.fail('terminate_child', { agent_id: child.agent_id })).code).toBe('already_terminating');
  });

  it('keep serving when one of them dies', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'failover' })).json;
    const onSecond = await via(second, run.root.agent_token);
    await stack.gateways[0].kill('SIGKILL');
    expect((await onSecond.ok('list_peers', { scope: 'all' })).peers).toHaveLength(1);
  });
});
