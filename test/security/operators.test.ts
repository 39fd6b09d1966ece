import crypto from 'node:crypto';
import { loadOperators } from '../../src/auth/operators';
import { readTestEnv } from '../setup/env';
import { AgentClient, eventually, Operator } from '../support/clients';
import { stackPort, startStack, type Stack } from '../support/stack';

/**
 * Named operators with roles, and the Origin check, on a stack of their own
 * configured with three people besides the embedded admin.
 */
const base = readTestEnv();
const tokens = { vera: `dpo_vera_${crypto.randomBytes(16).toString('hex')}`, ana: `dpo_ana_${crypto.randomBytes(16).toString('hex')}`, ada: `dpo_ada_${crypto.randomBytes(16).toString('hex')}` };
const sha = (t: string) => crypto.createHash('sha256').update(t).digest('hex');
const STACK_PORT = 28820;
const port = stackPort(STACK_PORT);
const own = `http://127.0.0.1:${port}`;

let stack: Stack;
const as = (name: keyof typeof tokens) => new Operator({ gatewayUrl: own, operatorToken: tokens[name] });
const clients: AgentClient[] = [];

beforeAll(async () => {
  stack = await startStack('operators', STACK_PORT, {
    DIPPER_OPERATORS: JSON.stringify([
      { name: 'Vera Viewer', role: 'viewer', token: tokens.vera },
      { name: 'Ana Approver', role: 'approver', token_sha256: sha(tokens.ana) },
      { name: 'Ada Admin', role: 'admin', token: tokens.ada },
    ]),
    DIPPER_ALLOWED_ORIGINS: 'https://console.example.com',
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
});

describe('named operators', () => {
  it('lets a viewer read and nothing else', async () => {
    const run = await as('ada').startRun('Be watched.');
    expect((await as('vera').request('GET', `/runs/${run.run_id}`)).status).toBe(200);
    expect((await as('vera').request('GET', `/runs/${run.run_id}/events`)).status).toBe(200);
    expect((await as('vera').request('GET', '/runs?status=active')).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/runs', { task: 'Not mine to start.' }],
      ['POST', `/runs/${run.run_id}/tokens/revoke`, undefined],
      ['POST', `/runs/${run.run_id}/cancel`, { reason: 'Not mine to end.' }],
      ['POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'approve' }],
      // A launch payload holds a token: admins only.
      ['GET', `/runs/${run.run_id}/agents/${run.root.agent_id}/launch`, undefined],
    ] as const) {
      const res = await as('vera').request(method, path, body);
      expect([path, res.status, res.json.error.code]).toEqual([path, 403, 'forbidden']);
      expect(res.json.error.message).toContain('Vera Viewer');
    }
    // The refused revoke and cancel changed nothing: the run goes on and the root's token still works.
    expect((await as('vera').request('GET', `/runs/${run.run_id}`)).json.status).toBe('active');
    expect((await fetch(`${own}/api/runtime/inbox?cursor=0&wait_ms=0`, { headers: { authorization: `Bearer ${run.root.agent_token}` } })).status).toBe(200);
  });

  it('records the approver who decided, by name, and lets no approver start runs', async () => {
    const run = await as('ada').startRun('Be reviewed.');
    const root = await AgentClient.connect(own, run.root.agent_token);
    clients.push(root);
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] first draft' });
    await eventually(async () => ((await as('ana').request('GET', `/runs/${run.run_id}`)).json.pending_root?.length ? true : undefined));
    const decided = await as('ana').request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'approve' });
    expect(decided.status).toBe(200);
    const approved = await eventually(async () => {
      const events = (await as('vera').request('GET', `/runs/${run.run_id}/events?type=completion.approved`)).json.events;
      return events.length > 0 ? events : undefined;
    });
    expect(approved[0].data).toMatchObject({ kind: 'review', by: 'user', operator: 'Ana Approver' });
    expect((await as('ana').request('POST', '/runs', { task: 'Not mine either.' })).status).toBe(403);
  });

  it('keeps the embedded token as an admin named "operator", and refuses tokens it does not know', async () => {
    expect((await stack.operator.request('POST', '/runs', { task: 'The default admin may.' })).status).toBe(201);
    const stranger = new Operator({ gatewayUrl: own, operatorToken: `dpo_${crypto.randomBytes(16).toString('hex')}` });
    expect((await stranger.request('GET', '/runs/run_000000000000')).status).toBe(401);
    // A listed digest is not a token.
    expect((await new Operator({ gatewayUrl: own, operatorToken: sha(tokens.ana) }).request('GET', '/runs/run_000000000000')).status).toBe(401);
  });

  it('refuses a malformed list at start, naming the entry', () => {
    const list = (...entries: object[]) => JSON.stringify(entries);
    expect(() => loadOperators(base.operatorToken, list({ name: 'x', role: 'owner', token: 'y'.repeat(30) }))).toThrow(/entry 0: role/);
    expect(() => loadOperators(base.operatorToken, list({ name: 'x', role: 'viewer' }))).toThrow(/exactly one of token and token_sha256/);
    expect(() => loadOperators(base.operatorToken, list({ name: 'operator', role: 'viewer', token: 'y'.repeat(30) }))).toThrow(/"operator" is taken twice/);
    expect(() => loadOperators(base.operatorToken, list({ name: 'x', role: 'viewer', token: base.operatorToken }))).toThrow(/a token another operator has/);
    expect(() => loadOperators(base.operatorToken, '{"name": "x"}')).toThrow(/must be a JSON list/);
    expect(loadOperators(base.operatorToken, undefined).size).toBe(1);
  });
});

describe('the Origin check', () => {
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  let agentToken: string;
  beforeAll(async () => {
    agentToken = (await stack.operator.startRun('Be reached.')).root.agent_token;
  });
  const mcp = (origin?: string) =>
    fetch(`${own}/mcp/beidou`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(origin ? { origin } : {}) },
      body: initialize,
    });
  const api = (origin?: string) =>
    fetch(`${own}/api/runs/run_000000000000`, { headers: { authorization: `Bearer ${tokens.ada}`, ...(origin ? { origin } : {}) } });

  it.each(['https://evil.example', 'http://127.0.0.1:9999', 'null', 'https://console.example.com.evil.example'])('refuses %s on both doors, before anything runs', async (origin) => {
    for (const res of [await mcp(origin), await api(origin)]) {
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden_origin');
    }
  });

  it.each([undefined, own, `http://localhost:${port}`, 'https://console.example.com'])('lets %s through', async (origin) => {
    expect((await mcp(origin)).status).toBe(200);
    expect((await api(origin)).status).toBe(404);
  });
});
