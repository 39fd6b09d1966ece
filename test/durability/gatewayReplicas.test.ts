import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { queriesAsked } from '../support/metrics';

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

/** How many inbox Queries a replica has asked, from its own metrics. */
const inboxQueries = (url: string) => queriesAsked(url, 'inbox');

/**
 * A long poll that nothing answers, held by the replica at `url` until its window ends or the test leaves: a
 * reference released by that replica's own clock. `answered` says whether it has answered yet.
 */
function referencePoll(url: string, token: string, waitMs: number): { answered: () => boolean; leave: () => void } {
  let answered = false;
  const left = new AbortController();
  fetch(`${url}/api/runtime/inbox?cursor=0&wait_ms=${waitMs}`, { headers: { authorization: `Bearer ${token}` }, signal: left.signal })
    .then(() => (answered = true))
    .catch(() => undefined);
  return { answered: () => answered, leave: () => left.abort() };
}

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
    const asked = await inboxQueries(stack.gatewayUrl);
    const poll = childA.inbox(0, 10_000);
    // The positive sign that A holds the poll: its first Query is counted.
    await eventually(async () => ((await inboxQueries(stack.gatewayUrl)) > asked ? true : undefined), 15_000, 20);
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

  it('hold an idle long poll for one Query per window, and wake it from either side', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'idle polls' })).json;
    const rootA = await via(stack.gatewayUrl, run.root.agent_token);
    const rootB = await via(second, run.root.agent_token);
    await rootA.ok('declare_plan', { tasks: [{ id: 't', role: 'dev', skill: 'worker', task: 'Do t.' }] });
    const child = await rootA.ok('spawn_agent', { task_id: 't' });
    const childB = await via(second, (await stack.operator.launch(run.run_id, child.agent_id)).token);

    // Silence for a 3 s window: one Query in all (the old way asked at 50, 100, 200 ... 2000 ms pauses: six or more).
    const before = await inboxQueries(stack.gatewayUrl);
    const quiet = await rootA.inbox(0, 3000);
    expect(quiet.messages).toEqual([]);
    expect((await inboxQueries(stack.gatewayUrl)) - before).toBe(1);

    // A change the workflows make on their own (a child's report reaches its leader by a signal between
    // workflows, not through the replica holding the poll) wakes the poll well before its window ends: before a poll
    // with the same window, begun earlier on the same replica, is released. (A poll that only timed out would answer
    // the empty inbox its first Query saw.)
    const asked = await inboxQueries(stack.gatewayUrl);
    const window = referencePoll(stack.gatewayUrl, childB.token, 20_000);
    await eventually(async () => ((await inboxQueries(stack.gatewayUrl)) > asked ? true : undefined), 15_000, 20);
    const waiting = rootA.inbox(0, 20_000);
    await eventually(async () => ((await inboxQueries(stack.gatewayUrl)) > asked + 1 ? true : undefined), 15_000, 20);
    await childB.ok('signal_review', { detail: '[REVIEW REQUIRED] t is done' });
    const report = await waiting;
    expect(report.messages.map((m) => m.kind)).toEqual(['review_report']);
    expect(window.answered()).toBe(false);
    window.leave();
    await rootB.ack(report.messages[0].seq);

    // A message this replica delivers is handed to the poll it holds as the delivery answered it: the same item, seq
    // and cursor the workflow's own view gives.
    const cursor = report.messages[0].seq;
    const before2 = await inboxQueries(stack.gatewayUrl);
    const polled = rootA.inbox(cursor, 20_000);
    await eventually(async () => ((await inboxQueries(stack.gatewayUrl)) > before2 ? true : undefined), 15_000, 20);
    const childA = await via(stack.gatewayUrl, childB.token);
    const sent = await childA.ok('send_message', { to: run.root.agent_id, content: 'handed over' });
    const got = await polled;
    expect(got.messages.map((m) => [m.message_id, m.kind, m.from, m.content])).toEqual([[sent.message_id, 'message', child.agent_id, 'handed over']]);
    expect(got).toEqual(await rootA.inbox(cursor, 0));
    await rootA.ack(got.next_cursor);

    // Handed over, such a poll asks its workflow once, when it begins. The workflow's own wake for the item (its
    // event write, 300 ms on) could overtake a slow delivery's answer and have the poll look again, so of five
    // polls one answered without a second look is the sign; with nothing handed, every poll looks twice.
    let handed = 0;
    for (let round = 0, at = got.next_cursor; round < 5; round++) {
      const asked = await inboxQueries(stack.gatewayUrl);
      const next = rootA.inbox(at, 20_000);
      await eventually(async () => ((await inboxQueries(stack.gatewayUrl)) > asked ? true : undefined), 15_000, 20);
      await childA.ok('send_message', { to: run.root.agent_id, content: `round ${round}` });
      const answer = await next;
      expect(answer.messages.map((m) => m.content)).toEqual([`round ${round}`]);
      if ((await inboxQueries(stack.gatewayUrl)) - asked === 1) handed++;
      at = answer.next_cursor;
      await rootA.ack(at);
    }
    expect(handed).toBeGreaterThan(0);
  });

  it('drain when stopped: the health check fails at once, a long poll answers, a call in flight still gets its answer', async () => {
    const DRAIN_SECONDS = 20;
    const third = await stack.addGateway(28742, { DIPPER_DRAIN_SECONDS: String(DRAIN_SECONDS) });
    const stopping = stack.gateways.at(-1)!;
    const run = (await stack.operator.request('POST', '/runs', { task: 'drain' })).json;
    const root = await via(third, run.root.agent_token);
    const asked = root.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Still there?', header: 'Check', multiSelect: false, options: [] }] } }, undefined, { timeout: 60_000 });
    const qid = await eventually(async () => (await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions[0]?.qid as string | undefined, 15_000, 100);
    const poll = root.inbox((await root.inbox(0, 0)).next_cursor, 25_000);
    // Its drain's whole length, measured by the replica that stays: held before the stop, so it is released before a
    // drain that ran its full length could end.
    const other = (await stack.operator.request('POST', '/runs', { task: 'drain reference' })).json;
    const held = await inboxQueries(second);
    const drainWindow = referencePoll(second, other.root.agent_token, DRAIN_SECONDS * 1000);
    await eventually(async () => ((await inboxQueries(second)) > held ? true : undefined), 15_000, 20);
    let exited = false;
    void stopping.exited.then(() => (exited = true));
    stopping.proc.kill('SIGTERM');
    await eventually(async () => ((await fetch(`${third}/healthz`).catch(() => null))?.status === 503 ? true : undefined), 5_000, 50);
    // The long poll answers at once with what it has; its runtime asks again, elsewhere. At once: while the replica
    // still holds the question's call, so not at the drain's end, which would have cut that call too.
    expect((await poll).messages).toEqual([]);
    expect(exited).toBe(false);
    // The person answers (through another replica): the call held by the stopping one still gets the answer.
    await stack.operator.request('POST', `/runs/${run.run_id}/questions/${qid}/answer`, { answers: [{ selected_labels: [], text: 'Yes, here.' }] });
    const answer = (await asked) as { isError?: boolean; structuredContent?: unknown };
    expect(answer.isError).toBeFalsy();
    expect(JSON.stringify(answer.structuredContent)).toContain('Yes, here.');
    // And it stops once nothing is in flight, before its drain's full length has passed.
    await stopping.exited;
    expect(drainWindow.answered()).toBe(false);
    drainWindow.leave();
  });

  it('keep serving when one of them dies', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'failover' })).json;
    const onSecond = await via(second, run.root.agent_token);
    await stack.gateways[0].kill('SIGKILL');
    expect((await onSecond.ok('list_peers', { scope: 'all' })).peers).toHaveLength(1);
  });
});
