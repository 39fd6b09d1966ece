import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { BridgeClient } from '../../src/common/isphere/bridgeClient';
import { ConnectorError, SendOutcomeUnknown } from '../../src/common/isphere/errors';
import { startBridgeSim } from '../../src/isphere/bridgeSim';

/** Dipper's bridge connector against the bridge simulator over real HTTP. */
const bridgeToken = 'bridge-secret-token';
const controlToken = 'sim-control-token';
let sim: { url: string; close(): Promise<void> };
let bridge: BridgeClient;

const control = async (path: string, body?: unknown) => {
  const res = await fetch(`${sim.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${controlToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
};

beforeAll(async () => {
  sim = await startBridgeSim({ bridgeToken, controlToken });
  bridge = new BridgeClient({ baseUrl: sim.url, token: bridgeToken, timeoutMs: 2000 });
});
beforeEach(() => control('/_sim/reset', {}));
afterAll(() => sim.close());

const codeOf = async (call: Promise<unknown>) => {
  try {
    await call;
  } catch (err) {
    if (err instanceof ConnectorError) return err.code;
    if (err instanceof SendOutcomeUnknown) return 'unknown';
    throw err;
  }
  return 'ok';
};

it('reads contacts page by page, every one once, and finds people who share a name', async () => {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bridge.contacts({ limit: 7, ...(cursor ? { cursor } : {}) });
    seen.push(...page.items.map((c) => c.contact_id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.length).toBeGreaterThan(20);
  const liWei = await bridge.contacts({ query: 'Li Wei' });
  expect(liWei.items.filter((c) => c.display_name === 'Li Wei').length).toBeGreaterThanOrEqual(2);
});

it('reads a conversation newest first, and a file whose bytes match its sha256', async () => {
  const page = await bridge.messages('conv_d_0001', { limit: 5 });
  expect(page.conversation.conversation_id).toBe('conv_d_0001');
  const times = page.items.map((m) => m.created_at!);
  expect([...times].sort().reverse()).toEqual(times);
  const files = await bridge.files({ conversation_id: 'conv_d_0001' });
  const file = files.items[0];
  const got = await bridge.fileContent(file.file_id, 50 * 1024 * 1024);
  expect(createHash('sha256').update(got.bytes).digest('hex')).toBe(got.sha256);
  expect(await codeOf(bridge.fileContent(file.file_id, 10))).toBe('PERMISSION_DENIED');
});

it.each([
  ['an unknown conversation', () => bridge.messages('conv_nope', {}), 'TARGET_NOT_FOUND'],
  ['a cursor of another query', async () => bridge.contacts({ query: 'a', cursor: (await bridge.contacts({ query: 'b', limit: 1 })).next_cursor ?? 'x' }), 'INVALID_ARGUMENT'],
  ['a wrong bridge token', () => new BridgeClient({ baseUrl: sim.url, token: 'wrong', timeoutMs: 2000 }).contacts({}), 'CONNECTOR_FAILED'],
])('answers %s in the contract codes', async (_what, call, code) => {
  expect(await codeOf(call())).toBe(code);
});

it('says NOT_LOGGED_IN when no one is logged in, and SOURCE_UNAVAILABLE when the bridge is not there', async () => {
  await control('/_sim/session', { logged_in: false });
  expect(await codeOf(bridge.contacts({}))).toBe('NOT_LOGGED_IN');
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  expect(await codeOf(new BridgeClient({ baseUrl: `http://127.0.0.1:${port}`, token: bridgeToken, timeoutMs: 2000 }).contacts({}))).toBe('SOURCE_UNAVAILABLE');
});

it('never leaks the bridge token in what it throws', async () => {
  const wrong = new BridgeClient({ baseUrl: sim.url, token: 'a-very-secret-wrong-token', timeoutMs: 2000 });
  const err = await wrong.contacts({}).catch((e: Error) => e);
  expect(JSON.stringify({ message: (err as Error).message, details: (err as ConnectorError).details })).not.toContain('a-very-secret-wrong-token');
});

it('reports a send whose answer was lost as unknown, and the lookup by client message id finds the one delivery', async () => {
  await control('/_sim/faults', { route: 'messages', mode: 'accept_then_drop', count: 1 });
  const body = { client_message_id: 'cm-lost-1', target_type: 'contact', target_id: 'c_0001', content_text: 'Hello once.' };
  expect(await codeOf(bridge.sendMessage(body))).toBe('unknown');
  const found = await bridge.lookupSend('cm-lost-1');
  expect(found?.message_ref).toEqual(expect.any(String));
  expect(await bridge.lookupSend('cm-never-sent')).toBeNull();
  // Sending the same id again is answered, not delivered twice.
  expect((await bridge.sendMessage(body)).duplicate).toBe(true);
  const { deliveries } = (await control('/_sim/deliveries')) as { deliveries: { client_message_id: string }[] };
  expect(deliveries.filter((d) => d.client_message_id === 'cm-lost-1')).toHaveLength(1);
});

it('reports a send refused before it left as SOURCE_UNAVAILABLE, not unknown', async () => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const nowhere = new BridgeClient({ baseUrl: `http://127.0.0.1:${port}`, token: bridgeToken, timeoutMs: 2000 });
  expect(await codeOf(nowhere.sendMessage({ client_message_id: 'cm-x', target_type: 'contact', target_id: 'c_0001', content_text: 'x' }))).toBe('SOURCE_UNAVAILABLE');
});

it('answers TIMEOUT (retryable) past its timeout, and SOURCE_UNAVAILABLE (retryable) for a bridge that cannot reach the client', async () => {
  await control('/_sim/faults', { route: 'reads', mode: 'delay', delay_ms: 800, count: 1 });
  const impatient = new BridgeClient({ baseUrl: sim.url, token: bridgeToken, timeoutMs: 200 });
  const slow = await impatient.contacts({}).catch((e: unknown) => e);
  expect(slow).toBeInstanceOf(ConnectorError);
  expect([(slow as ConnectorError).code, (slow as ConnectorError).retryable]).toEqual(['TIMEOUT', true]);
  await control('/_sim/faults', { route: 'reads', mode: 'fail', count: 1 });
  const down = await bridge.contacts({}).catch((e: unknown) => e);
  expect([(down as ConnectorError).code, (down as ConnectorError).retryable]).toEqual(['SOURCE_UNAVAILABLE', true]);
  expect((await bridge.contacts({ limit: 1 })).items).toHaveLength(1);
});
