import net from 'node:net';
import path from 'node:path';
import { testDataRoot } from '../setup/env';
import { AgentClient, eventually } from '../support/clients';
import { startProcess, waitForHttp, type DipperProcess } from '../support/processes';
import { stackPort } from '../support/stack';
import { closeAll, env, operator, spawn, startRun, task } from '../support/team';
import { queriesAsked } from '../support/metrics';

/**
 * The overload guards, against the shared gateway (default limits) and one
 * more replica with short request timeouts.
 */

const TIMED_PORT = stackPort(28743);
const REQUEST_TIMEOUT_MS = 2000;
const HEADERS_TIMEOUT_MS = 1000;

let timed: DipperProcess | undefined;
const timedUrl = `http://127.0.0.1:${TIMED_PORT}`;
/** Each agent token's bucket on the timed replica, refilled at one a second. */
const AGENT_BURST = 20;
/** The operator's bucket on the operator test's replica, refilled at one a second too. */
const OPERATOR_BURST = 20;

afterAll(async () => {
  await closeAll();
  await timed?.kill();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
}

async function post(url: string, token: string, body: unknown): Promise<Answer> {
  const res = await fetch(`${url}/mcp/beidou`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+/);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text ? JSON.parse(text) : null };
}

async function get(url: string, token: string): Promise<Answer> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text ? JSON.parse(text) : null };
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The tool error inside a JSON-RPC tools/call answer. */
const toolError = (a: Answer) => (a.body?.result?.isError ? JSON.parse(a.body.result.content[0].text).error : undefined);

describe('JSON-RPC batches', () => {
  it('refuses a batch of 3,000 calls whole with a JSON-RPC error, running none of them', async () => {
    const { root, runId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    const batch = [
      call(1, 'send_message', { to: child.agentId, content: 'from the batch' }),
      ...Array.from({ length: 2999 }, (_, i) => call(i + 2, 'list_peers', { scope: 'all' })),
    ];
    const answer = await post(env.gatewayUrl, root.token, batch);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(answer.body.error.message).toMatch(/batch/i);

    // A single message sent afterwards arrives: had the batch's message been sent, it would be there before it.
    const single = await root.ok('send_message', { to: child.agentId, content: 'single' });
    const inbox = await eventually(async () => {
      const view = await child.client.inbox(0, 0);
      return view.messages.some((m) => m.message_id === single.message_id) ? view : undefined;
    });
    expect(inbox.messages.map((m) => m.content)).toEqual(['single']);
  });

  it('refuses even a batch of one valid call', async () => {
    const { root } = await startRun();
    const answer = await post(env.gatewayUrl, root.token, [call(1, 'list_peers', { scope: 'all' })]);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe(-32600);
  });
});

describe('long polls per agent', () => {
  it('serves one long poll per agent: newer polls supersede older ones, looks and other agents are untouched', async () => {
    const { root, runId, rootId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    const url = (wait: number) => `${env.gatewayUrl}/api/runtime/inbox?cursor=0&wait_ms=${wait}`;

    const rootPoll = get(url(20_000), root.token);
    const answered: (Answer | undefined)[] = [];
    const polls = [0, 1, 2].map((i) => get(url(20_000), child.client.token).then((a) => (answered[i] = a)));
    // Two of the three are superseded at once, without any message arriving; which two depends on arrival order.
    const superseded = await eventually(async () => {
      const refused = answered.filter((a): a is Answer => a?.status === 409);
      return refused.length === 2 ? refused : undefined;
    });
    expect(answered.filter((a) => a !== undefined)).toHaveLength(2);
    for (const a of superseded) {
      expect(a.body.error).toMatchObject({ code: 'poll_superseded', retryable: false });
    }
    // A look (wait_ms=0) is not a long poll and supersedes nothing.
    expect((await get(url(0), child.client.token)).status).toBe(200);

    const toChild = await root.ok('send_message', { to: child.agentId, content: 'for the survivor' });
    const toRoot = await child.client.ok('send_message', { to: rootId, content: 'for the root' });
    const answers = await Promise.all(polls);
    const survivor = answers.find((a) => a.status !== 409)!;
    expect(answers.filter((a) => a.status === 409)).toHaveLength(2);
    expect(survivor.status).toBe(200);
    expect(survivor.body.messages.map((m: any) => m.message_id)).toEqual([toChild.message_id]);
    const rootAnswer = await rootPoll;
    expect(rootAnswer.status).toBe(200);
    expect(rootAnswer.body.messages.map((m: any) => m.message_id)).toEqual([toRoot.message_id]);
  });
});

describe('per-token rate limits', () => {
  it('answers calls over an agent token\'s burst with a retryable rate_limited tool error, leaving other tokens alone', async () => {
    await startTimed();
    const limited = await startRun();
    const other = await startRun();
    // The official client connects before the burst, as a runtime's would have.
    const viaClient = await AgentClient.connect(timedUrl, limited.root.token);
    try {
      // One call at a time (the timed replica lets an agent have two in flight), invalid input so none touches Temporal,
      // until the bucket of 20, refilled at one a second, is dry.
      const answers: Answer[] = [];
      while (answers.length < 500 && !answers.some((a) => toolError(a)?.code === 'rate_limited')) {
        answers.push(await post(timedUrl, limited.root.token, call(answers.length + 1, 'send_message', {})));
      }
      const codes = answers.map((a) => toolError(a)?.code);
      const refused = answers.filter((_, i) => codes[i] === 'rate_limited');
      // The bucket, less the few requests the client's connection took (initialize and its notice).
      expect(codes.filter((c) => c === 'invalid_input').length).toBeGreaterThanOrEqual(AGENT_BURST - 3);
      expect(refused).toHaveLength(1);
      expect(codes.every((c) => c === 'invalid_input' || c === 'rate_limited')).toBe(true);
      expect(refused[0].status).toBe(200);
      expect(toolError(refused[0])).toMatchObject({ code: 'rate_limited', retryable: true, retry_after_ms: expect.any(Number) });

      // The official client sees it as a tool error, not a transport failure.
      const outcome = await viaClient.call('list_peers', { scope: 'all' });
      if (outcome.isError) expect(outcome.error).toMatchObject({ code: 'rate_limited', retryable: true });
      // The runtime API shares the agent's bucket and answers 429 with Retry-After.
      const inbox = await get(`${timedUrl}/api/runtime/inbox?wait_ms=0`, limited.root.token);
      if (inbox.status === 429) {
        expect(Number(inbox.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(inbox.body.error).toMatchObject({ code: 'rate_limited', retryable: true });
      }
      // Another agent's token is served meanwhile.
      expect(JSON.parse((await post(timedUrl, other.root.token, call(1, 'list_peers', { scope: 'all' }))).body.result.content[0].text).peers).toHaveLength(1);
      // And the limited token is served again once its bucket refills.
      await eventually(async () => ((await post(timedUrl, limited.root.token, call(1, 'list_peers', { scope: 'all' }))).body.result.isError ? undefined : true));
    } finally {
      await viaClient.close();
    }
  });

  it('limits the operator token in a bucket of its own, with 429 and Retry-After', async () => {
    const run = await startRun();
    // A replica of its own with an operator bucket of 20 refilled at one a second, emptied one call at a time: waves of
    // 400 against the shared gateway's 200 a second were served slower than that bucket refills on a loaded machine,
    // and nothing was refused. The timed replica keeps the default, as its metrics are read with the operator token.
    const port = stackPort(28744);
    const url = `http://127.0.0.1:${port}`;
    const small = startProcess(
      'gateway',
      { ...env.processEnv, DIPPER_PORT: String(port), DIPPER_OPERATOR_RATE_PER_SECOND: '1', DIPPER_OPERATOR_RATE_BURST: String(OPERATOR_BURST) },
      path.join(testDataRoot, 'overload-operator-gateway.log'),
    );
    try {
      await waitForHttp(`${url}/healthz`);
      const answers: Answer[] = [];
      while (answers.length < 500 && !answers.some((a) => a.status === 429)) answers.push(await get(`${url}/api/runs/not-a-run`, env.operatorToken));
      const refused = answers.filter((a) => a.status === 429);
      expect(answers.filter((a) => a.status === 404).length).toBeGreaterThanOrEqual(OPERATOR_BURST);
      expect(refused).toHaveLength(1);
      expect(answers.every((a) => a.status === 404 || a.status === 429)).toBe(true);
      expect(Number(refused[0].retryAfter)).toBeGreaterThanOrEqual(1);
      expect(refused[0].body.error).toMatchObject({ code: 'rate_limited', retryable: true });
      // Agents are not in the operator's bucket.
      const peers = await post(url, run.root.token, call(1, 'list_peers', { scope: 'all' }));
      expect(JSON.parse(peers.body.result.content[0].text).peers).toHaveLength(1);
      // And the operator is served again once its bucket refills.
      await eventually(async () => ((await get(`${url}/api/runs/not-a-run`, env.operatorToken)).status === 404 ? true : undefined));
    } finally {
      await small.kill();
    }
  });
});

/**
 * Opens a raw connection and writes `text`; `closed` resolves with what came back once the server closes it. Each
 * exchange writes its label into `order` when its first bytes arrive, so a test can say which answer came first.
 */
function rawExchange(port: number, text: string, label = '', order: string[] = []): { connected: Promise<void>; closed: Promise<string> } {
  const socket = net.connect(port, '127.0.0.1');
  let reply = '';
  socket.on('data', (chunk) => {
    if (!reply) order.push(label);
    reply += chunk.toString('utf8');
  });
  const connected = new Promise<void>((resolve) => socket.on('connect', resolve));
  socket.on('connect', () => socket.write(text));
  const closed = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(reply));
    socket.on('error', () => undefined);
  });
  return { connected, closed };
}

/** How many inbox Queries the timed replica has asked, from its own metrics: a long poll asks its first on arrival. */
function timedInboxQueries(): Promise<number> {
  return queriesAsked(timedUrl, 'inbox');
}

/**
 * A long poll on the timed replica that nothing answers: the replica itself releases it `waitMs` after it arrived,
 * on its own clock, writing `label` into `order`. Resolves once the replica holds it (its first Query is counted), so
 * whatever the test does next begins after the poll's window did.
 */
async function heldPoll(token: string, waitMs: number, label: string, order: string[]): Promise<{ closed: Promise<string> }> {
  const before = await timedInboxQueries();
  const { closed } = rawExchange(
    TIMED_PORT,
    `GET /api/runtime/inbox?cursor=0&wait_ms=${waitMs} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    label,
    order,
  );
  await eventually(async () => ((await timedInboxQueries()) > before ? true : undefined), 15_000, 20);
  return { closed };
}

/** One more replica with short request timeouts and small buckets, started once for the describes that use it. */
async function startTimed(): Promise<void> {
  if (timed) return;
  timed = startProcess(
    'gateway',
    {
      ...env.processEnv,
      DIPPER_PORT: String(TIMED_PORT),
      DIPPER_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      DIPPER_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      // Small buckets for requests no token holds and for each agent's token, so the tests below can empty them at any
      // pace above one a second: with the shared gateway's 50 a second, a loaded machine served calls slower than that.
      DIPPER_ADDRESS_RATE_PER_SECOND: '1',
      DIPPER_ADDRESS_RATE_BURST: '30',
      DIPPER_RATE_PER_SECOND: '1',
      DIPPER_RATE_BURST: String(AGENT_BURST),
      DIPPER_CALLS_PER_AGENT: '2',
      // As behind a balancer on this host: loopback's X-Forwarded-For names the client.
      DIPPER_TRUSTED_PROXIES: '127.0.0.1',
    },
    path.join(testDataRoot, 'overload-timed-gateway.log'),
  );
  await waitForHttp(`${timedUrl}/healthz`);
}

describe('server timeouts', () => {
  beforeAll(startTimed);

  // Node checks for timed-out requests once a check interval (src/gateway/gateway.ts), so a cut comes at most one
  // interval after its timeout. Each bound below is an order on the timed replica's own clock: the cut against a long
  // poll the replica releases after a window of its own, begun before (lower bound) or after (upper bound) the
  // request it is compared with. A busy machine delays both alike; the test's own clock judges nothing.
  const CHECK_INTERVAL_MS = 1000;

  it('closes a connection whose headers never end, after the headers timeout', async () => {
    const { root } = await startRun();
    const other = await startRun();
    const order: string[] = [];
    // Begun before the slow headers, released at the headers timeout: the cut must not come before it.
    const early = await heldPoll(root.token, HEADERS_TIMEOUT_MS, 'window of the headers timeout', order);
    const slow = rawExchange(TIMED_PORT, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 'slow headers', order);
    await slow.connected;
    // Begun after them, released past the request timeout and two checks: the headers timeout (not the request
    // timeout, let alone Node's 60 s default) must have cut them by then.
    const late = await heldPoll(other.root.token, REQUEST_TIMEOUT_MS + 2 * CHECK_INTERVAL_MS, 'window past the timeouts', order);
    expect(await slow.closed).toMatch(/^HTTP\/1\.1 408/);
    await Promise.all([early.closed, late.closed]);
    expect(order).toEqual(['window of the headers timeout', 'slow headers', 'window past the timeouts']);
  });

  it('cuts a body shorter than its Content-Length after the request timeout, but never a long poll waiting for its answer', async () => {
    const { root, runId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    const other = await startRun();
    const order: string[] = [];

    // The child's poll, held by the replica before the slow body begins: a request timeout that counted a long
    // poll's wait would cut it no later than the slow body.
    const before = await timedInboxQueries();
    const poll = get(`${timedUrl}/api/runtime/inbox?cursor=0&wait_ms=25000`, child.client.token);
    await eventually(async () => ((await timedInboxQueries()) > before ? true : undefined), 15_000, 20);
    // Begun before the slow body, released at the request timeout: the cut must not come before it.
    const early = await heldPoll(root.token, REQUEST_TIMEOUT_MS, 'window of the request timeout', order);
    const slow = rawExchange(
      TIMED_PORT,
      `POST /mcp/beidou HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${root.token}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 100\r\n\r\n{"jsonrpc":',
      'slow body',
      order,
    );
    await slow.connected;
    // Begun after it, released two checks past the request timeout: the configured timeout (not the 30 s default)
    // must have cut it by then.
    const late = await heldPoll(other.root.token, REQUEST_TIMEOUT_MS + 2 * CHECK_INTERVAL_MS, 'window past the timeout', order);
    expect(await slow.closed).toMatch(/^HTTP\/1\.1 408/);
    await Promise.all([early.closed, late.closed]);
    expect(order).toEqual(['window of the request timeout', 'slow body', 'window past the timeout']);

    // The cut of the slow body is the sign that the request timeout has passed for the older poll too, and the poll
    // is still waiting: it answers with the message sent now.
    const sent = await root.ok('send_message', { to: child.agentId, content: 'still there?' });
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.body.messages.map((m: any) => m.message_id)).toEqual([sent.message_id]);
  });
});

describe('requests no token holds', () => {
  beforeAll(startTimed);
  const at = (what: string, init: RequestInit = {}) =>
    fetch(`${timedUrl}${what}`, init).then(async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() }));
  const someRefused = async (send: () => ReturnType<typeof at>) => (await Promise.all(Array.from({ length: 5 }, send))).filter((a) => a.status === 429);

  it("are limited per address: the console's files, the webhook, refused tokens; a good token is not", async () => {
    // The console's page, far past the bucket (30 deep, one a second back).
    const pages = await Promise.all(Array.from({ length: 40 }, () => at('/console/')));
    const refused = pages.filter((p) => p.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(5);
    expect(pages.filter((p) => p.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(Number(refused[0].retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused[0].text).error).toMatchObject({ code: 'rate_limited', retryable: true, message: expect.stringContaining('from this address') });
    // The same bucket: the webhook, and calls whose token is refused (401 until then).
    const webhook = () => at('/hooks/isphere/approvals/run_000000000000/apr_x/decision', { method: 'POST', body: '{}' });
    expect((await someRefused(webhook)).length).toBeGreaterThanOrEqual(1);
    const badToken = () => at('/mcp/beidou', { method: 'POST', headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json' }, body: '{}' });
    expect((await someRefused(badToken)).length).toBeGreaterThanOrEqual(1);
    // A token that holds has a bucket of its own.
    expect((await get(`${timedUrl}/api/runs/not-a-run`, env.operatorToken)).status).toBe(404);
    // Health is never limited: a balancer's checks pass through any flood.
    expect((await at('/healthz')).status).toBe(200);
    // Another client behind the trusted balancer has its own bucket; the last X-Forwarded-For entry is the one believed.
    expect((await at('/console/', { headers: { 'x-forwarded-for': '10.9.9.9' } })).status).toBe(200);
    expect((await someRefused(() => at('/console/', { headers: { 'x-forwarded-for': '10.9.9.9, 127.0.0.1' } }))).length).toBeGreaterThanOrEqual(1);
    // And the bucket fills again.
    await eventually(async () => ((await at('/console/')).status === 200 ? true : undefined), 10_000, 250);
  });
});

describe('calls in flight per agent', () => {
  beforeAll(startTimed);
  it('are capped, so an agent holding slow calls is refused more while another agent is served; its slots come back when they end', async () => {
    const begin = async () => {
      const run = (await operator.request('POST', '/runs', { task: 'Hold on.' })).json as { run_id: string; root: { agent_token: string } };
      return { runId: run.run_id, token: run.root.agent_token };
    };
    const flooder = await begin();
    const other = await begin();
    // Two questions to the person: each call waits (no timeout), holding one of the agent's two slots on this replica.
    const held = new AbortController();
    const waiting = [0, 1].map((i) =>
      fetch(`${timedUrl}/mcp/beidou`, {
        method: 'POST',
        signal: held.signal,
        headers: { authorization: `Bearer ${flooder.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(call(i + 1, 'ask_user', { questions: [{ question: `Hold slot ${i}?`, header: '', multiSelect: false, options: [] }] })),
      }).catch(() => undefined),
    );
    // The positive sign that both are in flight: both questions reached the person.
    await eventually(async () => ((await operator.request('GET', `/questions?run=${flooder.runId}`)).json.questions.length === 2 ? true : undefined));
    const third = await post(timedUrl, flooder.token, call(3, 'list_peers', { scope: 'all' }));
    expect(toolError(third)).toMatchObject({ code: 'rate_limited', retryable: true, message: expect.stringContaining('in flight') });
    // Another agent on the same replica is served.
    const served = await post(timedUrl, other.token, call(1, 'list_peers', { scope: 'all' }));
    expect(served.body.result.isError).toBeFalsy();
    // The waits end (the client went away): the slots are the agent's again.
    held.abort();
    await Promise.all(waiting);
    await eventually(async () => ((await post(timedUrl, flooder.token, call(4, 'list_peers', { scope: 'all' }))).body.result.isError ? undefined : true));
  });
});
