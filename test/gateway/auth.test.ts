import { expiryOf, mintAgentToken } from '../../src/auth/tokens';
import { closeAll, env, spawn, startRun, task, waitForInbox } from '../support/team';

afterAll(closeAll);

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'auth-test', version: '0' } },
};

/** The three doors and a request that would succeed behind each of them with the right token. */
const endpoints = {
  mcp: {
    method: 'POST',
    path: '/mcp/beidou',
    body: JSON.stringify(initialize),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  },
  inbox: { method: 'GET', path: '/api/runtime/inbox?cursor=0&wait_ms=0', body: undefined, headers: {} },
  ack: { method: 'POST', path: '/api/runtime/inbox/ack', body: JSON.stringify({ up_to: 0 }), headers: { 'content-type': 'application/json' } },
  runs: { method: 'POST', path: '/api/runs', body: JSON.stringify({ task: 'Should never start.' }), headers: { 'content-type': 'application/json' } },
  run: { method: 'GET', path: '/api/runs/run_does_not_matter', body: undefined, headers: {} },
} as const;
type Endpoint = keyof typeof endpoints;

async function hit(which: Endpoint, authorization: string | null) {
  const e = endpoints[which];
  const res = await fetch(`${env.gatewayUrl}${e.path}`, {
    method: e.method,
    headers: { ...e.headers, ...(authorization === null ? {} : { authorization }) },
    ...(e.body === undefined ? {} : { body: e.body }),
  });
  return { status: res.status, text: await res.text(), wwwAuthenticate: res.headers.get('www-authenticate') };
}

/** 401 with exactly { error: { code, message } } and nothing that explains why. */
function expectUnauthorized(res: { status: number; text: string; wwwAuthenticate: string | null }, secret?: string): void {
  expect(res.status).toBe(401);
  expect(res.wwwAuthenticate).toBe('Bearer');
  const body = JSON.parse(res.text);
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  expect(body.error.code).toBe('unauthorized');
  expect(typeof body.error.message).toBe('string');
  expect(res.text).not.toMatch(/expired|signature|secret|token/i);
  if (secret) expect(res.text).not.toContain(secret);
}

/** Replaces one character of the signature with another base64url character. */
function tamper(token: string): string {
  const at = token.length - 5;
  return token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
}

let run: Awaited<ReturnType<typeof startRun>>;
let rootToken: string;

beforeAll(async () => {
  run = await startRun();
  rootToken = run.root.token;
});

describe('agent endpoints refuse bad tokens with a bare 401', () => {
  const agentDoors: Endpoint[] = ['mcp', 'inbox', 'ack'];
  const cases: [string, () => string | null][] = [
    ['no Authorization header', () => null],
    ['an empty bearer', () => 'Bearer '],
    ['another scheme', () => `Basic ${Buffer.from('root:root').toString('base64')}`],
    ['a bare token without the scheme', () => rootToken],
    ['an unknown token', () => 'Bearer dpa_bm90LWEtdG9rZW4.bm90LWEtc2lnbmF0dXJl'],
    ['a malformed token', () => 'Bearer dpa_%%%.&&&.***'],
    ['garbage', () => `Bearer ${'x'.repeat(5000)}`],
    ['a tampered signature', () => `Bearer ${tamper(rootToken)}`],
    ['an expired token', () => `Bearer ${mintAgentToken(env.tokenSecret, { run_id: run.runId, agent_id: run.rootId, gen: 1, exp: expiryOf(Date.now() - 3600_000, 60) })}`],
    ['a token signed with another secret', () => `Bearer ${mintAgentToken('not-the-secret', { run_id: run.runId, agent_id: run.rootId, gen: 1, exp: expiryOf(Date.now(), 3600) })}`],
    ['the operator token', () => `Bearer ${env.operatorToken}`],
  ];
  for (const door of agentDoors) {
    it.each(cases)(`${door}: %s`, async (_name, auth) => {
      expectUnauthorized(await hit(door, auth()), rootToken);
    });
  }

  it('the same doors accept the valid agent token (control)', async () => {
    expect((await hit('mcp', `Bearer ${rootToken}`)).status).toBe(200);
    expect((await hit('inbox', `Bearer ${rootToken}`)).status).toBe(200);
    expect((await hit('ack', `Bearer ${rootToken}`)).status).toBe(200);
  });
});

describe('the operator API refuses everything but the operator token', () => {
  const cases: [string, () => string | null][] = [
    ['no Authorization header', () => null],
    ['an empty bearer', () => 'Bearer '],
    ['an unknown token', () => 'Bearer dpo_unknown'],
    ['a tampered operator token', () => `Bearer ${tamper(env.operatorToken)}`],
    ['the operator token with a suffix', () => `Bearer ${env.operatorToken}x`],
    ['a prefix of the operator token', () => `Bearer ${env.operatorToken.slice(0, -1)}`],
    ['an agent token', () => `Bearer ${rootToken}`],
    ['an expired agent token', () => `Bearer ${mintAgentToken(env.tokenSecret, { run_id: run.runId, agent_id: run.rootId, gen: 1, exp: expiryOf(Date.now() - 3600_000, 60) })}`],
  ];
  for (const door of ['runs', 'run'] as const) {
    it.each(cases)(`${door}: %s`, async (_name, auth) => {
      expectUnauthorized(await hit(door, auth()), env.operatorToken);
    });
  }

  it('an agent token cannot list a run, even its own', async () => {
    const res = await fetch(`${env.gatewayUrl}/api/runs/${run.runId}`, { headers: { authorization: `Bearer ${rootToken}` } });
    expectUnauthorized({ status: res.status, text: await res.text(), wwwAuthenticate: res.headers.get('www-authenticate') });
  });
});

async function team() {
  const { root, runId, rootId } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
  const a = await spawn(root, runId, 'a');
  const b = await spawn(root, runId, 'b');
  return { root, rootId, a, b };
}

describe('tool input that names a caller is refused', () => {
  // One team for every case: each refused call must leave it exactly as it was.
  let t: Awaited<ReturnType<typeof team>>;
  beforeAll(async () => {
    t = await team();
  });

  it.each(['from', 'caller_id', 'agent_id', 'caller_agent_id', 'run_id', 'sender'])(
    'send_message with a %s field is invalid_input naming it, and delivers nothing',
    async (field) => {
      const error = await t.a.client.fail('send_message', { to: t.b.agentId, content: 'spoofed', [field]: t.rootId });
      expect(error).toMatchObject({ code: 'invalid_input', field });
      expect(error.message).toContain(field);
      expect((await t.b.client.inbox(0, 0)).messages).toEqual([]);
    },
  );

  it.each(['caller_id', 'agent_id', 'caller_agent_id', 'run_id', 'leader_id'])(
    'list_peers with a %s field is invalid_input naming it',
    async (field) => {
      expect(await t.a.client.fail('list_peers', { scope: 'team', [field]: t.rootId })).toMatchObject({
        code: 'invalid_input',
        field,
      });
    },
  );

  it('leaves every inbox empty', async () => {
    for (const c of [t.root, t.a.client, t.b.client]) expect((await c.inbox(0, 0)).messages).toEqual([]);
  });
});

describe('the sender is the owner of the token', () => {
  let t: Awaited<ReturnType<typeof team>>;
  beforeAll(async () => {
    t = await team();
  });

  it("records a message sent with agent A's token as from A", async () => {
    const sent = await t.a.client.ok('send_message', { to: t.b.agentId, content: 'hi from a' });
    const item = await waitForInbox(t.b.client, (m) => m.message_id === sent.message_id);
    expect(item).toMatchObject({ kind: 'message', from: t.a.agentId, content: 'hi from a' });

    const back = await t.b.client.ok('send_message', { to: t.rootId, content: 'hi from b' });
    expect(await waitForInbox(t.root, (m) => m.message_id === back.message_id)).toMatchObject({ from: t.b.agentId });
  });

  it('the runtime inbox refuses an agent named in the query or body, and serves only the caller', async () => {
    const sent = await t.root.ok('send_message', { to: t.b.agentId, content: 'for b only' });
    const peek = await fetch(`${env.gatewayUrl}/api/runtime/inbox?wait_ms=0&agent_id=${t.b.agentId}`, {
      headers: { authorization: `Bearer ${t.a.client.token}` },
    });
    expect(peek.status).toBe(400);
    expect(((await peek.json()) as any).error).toMatchObject({ code: 'invalid_input', field: 'agent_id' });

    const ack = await fetch(`${env.gatewayUrl}/api/runtime/inbox/ack`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.a.client.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ up_to: 100, agent_id: t.b.agentId }),
    });
    expect(ack.status).toBe(400);
    expect(((await ack.json()) as any).error).toMatchObject({ code: 'invalid_input', field: 'agent_id' });

    expect((await t.a.client.inbox(0, 0)).messages.some((m) => m.message_id === sent.message_id)).toBe(false);
    expect((await t.b.client.inbox(0, 0)).messages.some((m) => m.message_id === sent.message_id)).toBe(true);
  });
});
