import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { freePort } from '../../src/devstack/dipperProcess';
import { readTestEnv, testDataRoot } from '../setup/env';
import { eventually, Operator } from '../support/clients';
import { startProcess, waitForHttp, type DipperProcess } from '../support/processes';

/**
 * The model proxy as a hostile agent meets it: two gateway replicas beside
 * the shared stack (same worker, Temporal server and event store), with a
 * model endpoint that holds its answers until the test lets them go. The
 * `thrifty` skill runs on the claude runtime with a budget of 3 turns;
 * `worker` is a command runtime and the rest none, as the gateways are told.
 */
const MODEL_KEY = 'sk-proxy-test-operator-key';

/** A Messages endpoint that records what reaches it and, while held, answers only once `open` is called. */
async function startHeldModel() {
  const seen: Array<{ path: string; key: string }> = [];
  let waiting: Array<() => void> = [];
  let opened = false;
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', key: String(req.headers['x-api-key'] ?? '') });
    req.resume();
    const answer = () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'msg_x', type: 'message', role: 'assistant', model: 'held', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } }));
    };
    if (opened) answer();
    else waiting.push(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    held: () => waiting.length,
    hold: () => {
      opened = false;
    },
    open: () => {
      opened = true;
      for (const answer of waiting) answer();
      waiting = [];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

const env = readTestEnv();
const operator = new Operator(env);
let model: Awaited<ReturnType<typeof startHeldModel>>;
const gateways: DipperProcess[] = [];
const urls: string[] = [];

beforeAll(async () => {
  model = await startHeldModel();
  const extra = {
    DIPPER_MODEL_UPSTREAM_URL: model.url,
    DIPPER_MODEL_API_KEY: MODEL_KEY,
    DIPPER_MODEL_BUDGETS: JSON.stringify({ skills: { thrifty: { turns: 3 } } }),
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'none' }, skills: { thrifty: { kind: 'claude' }, worker: { kind: 'command', command: ['true'] } } }),
  };
  const first = await freePort(Number(new URL(env.gatewayUrl).port) + 50);
  const second = await freePort(first + 1);
  for (const port of [first, second]) {
    gateways.push(startProcess('gateway', { ...env.processEnv, ...extra, DIPPER_PORT: String(port) }, path.join(testDataRoot, `model-proxy-gateway-${port}.log`)));
    urls.push(`http://127.0.0.1:${port}`);
  }
  await Promise.all(urls.map((url) => waitForHttp(`${url}/healthz`)));
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.kill()));
  await model?.close();
});

async function rootOf(skill: string): Promise<{ runId: string; token: string }> {
  const res = await operator.request('POST', '/runs', { task: 'Use the model.', root_skill: skill });
  expect(res.status).toBe(201);
  return { runId: res.json.run_id, token: res.json.root.agent_token };
}

async function ask(token: string, route = '/model/v1/messages', gateway = urls[0]) {
  const res = await fetch(`${gateway}${route}`, {
    method: 'POST',
    headers: { 'x-api-key': token, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'held', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as { type: string; error?: { type: string; message: string } } };
}

describe('the model proxy', () => {
  it('forwards only its exact paths: a variant is refused, never forwarded uncounted', async () => {
    const root = await rootOf('thrifty');
    const before = model.seen.length;
    model.open();
    for (const route of ['/model/v1/messages/', '/model/V1/Messages', '/model/v1/MESSAGES', '/model/v1//messages', '/model/v1/messages/count_tokens/']) {
      const res = await ask(root.token, route);
      expect({ route, status: res.status, error: res.body.error?.type }).toEqual({ route, status: 404, error: 'not_found_error' });
    }
    expect(model.seen.slice(before)).toEqual([]);
    // The exact path, with the query the Claude CLI adds, is forwarded with the operator's key and counted.
    expect((await ask(root.token, '/model/v1/messages?beta=true')).status).toBe(200);
    expect(model.seen.slice(before)).toEqual([{ path: '/v1/messages', key: MODEL_KEY }]);
    const usage = (await operator.request('GET', `/runs/${root.runId}`)).json.model_usage;
    expect(usage.total.requests).toBe(1);
    await operator.request('POST', `/runs/${root.runId}/cancel`, { reason: 'test over' });
  });

  it('answers at most the turn budget of 20 concurrent slow requests made through two replicas', async () => {
    const root = await rootOf('thrifty');
    model.hold();
    const answers = Array.from({ length: 20 }, (_, i) => ask(root.token, '/model/v1/messages', urls[i % 2]));
    const settled: Array<Awaited<ReturnType<typeof ask>>> = [];
    for (const a of answers) void a.then((r) => settled.push(r));
    // Every request has either reached the model (held there) or been answered without it.
    await eventually(async () => (model.held() + settled.length === 20 ? true : undefined), 20_000, 50);
    const reached = model.held();
    model.open();
    const all = await Promise.all(answers);
    const answered = all.filter((r) => r.status === 200);
    expect(answered.length).toBeLessThanOrEqual(3);
    expect(answered.length).toBe(reached);
    // Those held back were told to try again (the CLI does), with a reason; none reached the model.
    for (const r of all.filter((x) => x.status !== 200)) expect({ status: r.status, error: r.body.error?.type }).toEqual({ status: 429, error: 'rate_limit_error' });
    expect((await operator.request('GET', `/runs/${root.runId}`)).json.model_usage.total.requests).toBe(answered.length);
    // Three answered: the budget is spent, and the next request is refused outright.
    expect(answered).toHaveLength(3);
    const next = await ask(root.token);
    expect(next.status).toBe(403);
    expect(next.body.error).toEqual({ type: 'permission_error', message: "Dipper stopped this agent: this agent's turns budget is spent (3 used of 3)." });
    await operator.request('POST', `/runs/${root.runId}/cancel`, { reason: 'test over' });
  });

  it.each([
    ['none', 'lead'],
    ['command', 'worker'],
  ])("refuses an agent of the %s runtime: it has no use for the operator's key", async (_kind, skill) => {
    const root = await rootOf(skill);
    const before = model.seen.length;
    for (const route of ['/model/v1/messages', '/model/v1/messages/count_tokens']) {
      const res = await ask(root.token, route);
      expect(res.status).toBe(403);
      expect(res.body.error).toEqual({ type: 'permission_error', message: "Dipper's model proxy serves agents of the claude runtime only; this agent's runtime does not use it." });
    }
    expect(model.seen.slice(before)).toEqual([]);
    await operator.request('POST', `/runs/${root.runId}/cancel`, { reason: 'test over' });
  });
});
