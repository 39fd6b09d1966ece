import { AgentClient, eventually, inboxUnlessRetry } from '../support/clients';
import { updatesSent } from '../support/metrics';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
const clients: AgentClient[] = [];
beforeAll(async () => {
  // Calls made before the kill wait through the new worker's start: a loaded machine took longer than the default
  // 15 s to bring one up and answer, and the first test's sends came back outcome_unknown (true, but not its question).
  stack = await startStack('crash', 28730, { DIPPER_CALL_TIMEOUT_MS: '45000' });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
});

async function connect(token: string): Promise<AgentClient> {
  const c = await AgentClient.connect(stack.gatewayUrl, token);
  clients.push(c);
  return c;
}

describe('killing the worker', () => {
  it('loses no message and starts no agent twice when it dies with sends and a spawn in flight', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'survive a crash' })).json;
    const root = await connect(run.root.agent_token);
    const worker = (id: string) => ({ id, role: id, skill: 'worker', task: `Do ${id}.` });
    await root.ok('declare_plan', { tasks: [worker('recipient'), worker('late')] });
    const spawned = await root.ok('spawn_agent', { task_id: 'recipient' });
    const recipient = await connect((await stack.operator.launch(run.run_id, spawned.agent_id)).token);

    // Freeze the worker so nothing can complete, put sends and a spawn in flight, then kill it without warning.
    stack.worker.proc.kill('SIGSTOP');
    let settled = 0;
    const track = <T>(p: Promise<T>) => p.finally(() => settled++);
    const [deliveries, spawns] = await Promise.all([updatesSent(stack.gatewayUrl, 'deliverMessages'), updatesSent(stack.gatewayUrl, 'spawnAgent')]);
    const sends = Array.from({ length: 30 }, (_, i) => track(root.call('send_message', { to: spawned.agent_id, content: `m${i}` })));
    const lateSpawn = track(root.call('spawn_agent', { task_id: 'late' }));
    // The positive sign: the gateway has sent the sends' Updates (batched) and the spawn's, and none came back.
    await eventually(async () => ((await updatesSent(stack.gatewayUrl, 'deliverMessages')) > deliveries && (await updatesSent(stack.gatewayUrl, 'spawnAgent')) > spawns ? true : undefined));
    expect(settled).toBe(0);
    await stack.restartWorker('SIGKILL');

    const results = await Promise.all(sends);
    expect(results.filter((r) => r.isError).map((r) => r.text)).toEqual([]);
    const sent = new Set(results.map((r) => r.data.message_id as string));
    expect(sent.size).toBe(30);

    const late = await lateSpawn;
    expect(late.isError).toBe(false);
    expect(late.data).toMatchObject({ task_id: 'late', team_created: false });

    const delivered = await eventually(async () => {
      const view = await inboxUnlessRetry(recipient);
      return view && view.messages.length >= 30 ? view.messages : undefined;
    }, 60_000);
    const ids = delivered.map((m: any) => m.message_id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids)).toEqual(sent);

    // Exactly one agent per plan task, whatever was replayed.
    const children = (await root.ok('list_peers', { scope: 'children' })).peers;
    expect(children.map((p: any) => p.agent_id).sort()).toEqual([spawned.agent_id, late.data.agent_id].sort());
    expect((await root.fail('spawn_agent', { task_id: 'late' })).code).toBe('task_not_pending');
  }, 120_000);

  it('a read made as the worker dies is answered by the next worker, not refused while Temporal waits on the dead one', async () => {
    const patient = await stack.addGateway(28738, { DIPPER_CALL_TIMEOUT_MS: '30000' });
    const run = (await stack.operator.request('POST', '/runs', { task: 'read through a crash' })).json;
    const root = await AgentClient.connect(patient, run.root.agent_token);
    clients.push(root);
    // The run's workflow last ran on this worker: Temporal offers its next Query to this worker's own queue.
    expect((await root.ok('list_peers', { scope: 'all' })).peers.map((p: { agent_id: string }) => p.agent_id)).toEqual([run.root.agent_id]);

    await stack.worker.kill('SIGKILL');
    // Sent while the dead worker's queue still holds the run: its first attempt waits there and gets no answer.
    const read = root.call('list_peers', { scope: 'all' });
    await stack.restartWorker();
    const out = await read;
    expect(out.error).toBeUndefined();
    expect(out.data.peers.map((p: { agent_id: string }) => p.agent_id)).toEqual([run.root.agent_id]);
  }, 120_000);

  it('a change answered outcome_unknown while the worker was down is made when it returns; repeated with its key it is delivered once', async () => {
    // A replica that gives up after 2.5 s: the calls below outlast it while the worker is down.
    const quick = await stack.addGateway(28736, { DIPPER_CALL_TIMEOUT_MS: '2500' });
    const run = (await stack.operator.request('POST', '/runs', { task: 'be told the truth' })).json;
    const root = await connect(run.root.agent_token);
    const rootQuick = await AgentClient.connect(quick, run.root.agent_token);
    clients.push(rootQuick);
    await root.ok('declare_plan', { tasks: [{ id: 'r', role: 'r', skill: 'worker', task: 'Receive.' }] });
    const recipient = (await root.ok('spawn_agent', { task_id: 'r' })).agent_id as string;

    await stack.worker.kill('SIGKILL');
    const keyed = { to: recipient, content: 'exactly once', idempotency_key: 'truth-1' };
    const [first, unkeyed, review] = await Promise.all([
      rootQuick.call('send_message', keyed),
      rootQuick.call('send_message', { to: run.root.agent_id, content: 'to myself' }),
      rootQuick.call('signal_review', { detail: '[REVIEW REQUIRED] done?' }),
    ]);
    // Not `unavailable`: each Update reached Temporal, which holds it for the next worker.
    expect(first.error).toMatchObject({ code: 'outcome_unknown', retryable: true });
    expect(unkeyed.error).toMatchObject({ code: 'outcome_unknown', retryable: false });
    expect(review.error).toMatchObject({ code: 'outcome_unknown', retryable: false });
    await stack.restartWorker();

    // The repeat the answer invited: the first call's message, delivered once.
    const again = await eventually(async () => {
      const out = await root.call('send_message', keyed);
      return out.isError && out.error?.retryable ? undefined : out;
    }, 60_000);
    expect(again.data).toMatchObject({ delivered: true, reused: true });
    const view = await eventually(async () => {
      const inbox = await inboxUnlessRetry(root);
      return inbox?.messages.some((m: { content: string }) => m.content === 'to myself') ? inbox : undefined;
    }, 30_000);
    // The unkeyed message was in fact delivered, and the review reported: both answers told the truth.
    expect(view.messages.filter((m: { content: string }) => m.content === 'to myself')).toHaveLength(1);
    const statusOfRoot = async () => (await root.ok('list_peers', { scope: 'all' })).peers.find((p: { agent_id: string }) => p.agent_id === run.root.agent_id).status;
    expect(await eventually(async () => ((await statusOfRoot()) === 'review_pending' ? true : undefined), 30_000).catch(() => statusOfRoot())).toBe(true);
    const recipientClient = await connect((await stack.operator.launch(run.run_id, recipient)).token);
    const got = (await recipientClient.inbox(0, 0)).messages.filter((m: { content: string }) => m.content === 'exactly once');
    expect(got.map((m: { message_id: string }) => m.message_id)).toEqual([again.data.message_id]);
  }, 120_000);
});

