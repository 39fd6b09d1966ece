import { startBridgeSim } from '../../../src/isphere/bridgeSim';
import { BRIDGE, CONTROL, Sim } from './harness';

const DATA_ROUTES: [string, string, unknown?][] = [
  ['GET', '/v1/status'],
  ['GET', '/v1/contacts'],
  ['GET', '/v1/groups'],
  ['GET', '/v1/conversations'],
  ['GET', '/v1/conversations/conv_d_0001/messages'],
  ['GET', '/v1/files'],
  ['GET', '/v1/files/f_0001/content'],
  ['POST', '/v1/messages', { client_message_id: 'auth-1', target_type: 'contact', target_id: 'c_0001', content_text: 'hi' }],
  ['POST', '/v1/files', { client_message_id: 'auth-2', target_type: 'contact', target_id: 'c_0001', file_name: 'a.txt', content_base64: 'aGk=' }],
  ['GET', '/v1/sends/auth-1'],
];
const CONTROL_ROUTES: [string, string, unknown?][] = [
  ['POST', '/_sim/session', { logged_in: false }],
  ['POST', '/_sim/faults', { route: 'messages', mode: 'fail', count: 1 }],
  ['GET', '/_sim/deliveries'],
  ['POST', '/_sim/reset'],
];
const cases = (routes: [string, string, unknown?][], tokens: [string, string | null][]) =>
  routes.flatMap(([method, path, body]) => tokens.map(([who, token]) => ({ method, path, body, who, token })));

describe('isphere bridge simulator: authentication', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('answers /healthz without a token', async () => {
    expect(await sim.get('/healthz', null)).toMatchObject({ status: 200, body: { ok: true } });
  });

  it.each(
    cases(DATA_ROUTES, [
      ['no token', null],
      ['a wrong token', 'not-the-token'],
      ['the control token', CONTROL],
    ]),
  )('$method $path with $who is 401 unauthorized', async ({ method, path, body, token }) => {
    const reply = await sim.request(method, path, { token, body });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each(
    cases(CONTROL_ROUTES, [
      ['no token', null],
      ['a wrong token', 'not-the-token'],
      ['the bridge token', BRIDGE],
    ]),
  )('$method $path with $who is 401 unauthorized and changes nothing', async ({ method, path, body, token }) => {
    const reply = await sim.request(method, path, { token, body });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('unauthorized');
    expect((await sim.get('/v1/status')).body.logged_in).toBe(true);
    expect((await sim.get('/v1/contacts?limit=1')).status).toBe(200);
  });

  it('a lowercase scheme and surrounding spaces are still a bearer token', async () => {
    const res = await fetch(`${sim.url}/v1/status`, { headers: { authorization: `bearer   ${BRIDGE} ` } });
    expect(res.status).toBe(200);
  });

  it.each([
    ['GET', '/v1/nothing', BRIDGE],
    ['DELETE', '/v1/messages', BRIDGE],
    ['GET', '/nothing', null],
    ['GET', '/_sim/nothing', CONTROL],
  ])('%s %s is 404 not_found', async (method, path, token) => {
    const reply = await sim.request(method, path, { token });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
  });

  it('malformed JSON is invalid_argument, and no answer carries a token or a stack', async () => {
    const replies = [
      await sim.request('POST', '/v1/messages', { raw: '{"client_message_id": ' }),
      await sim.request('POST', '/_sim/session', { token: CONTROL, raw: '{nope' }),
      await sim.get('/v1/contacts', 'wrong'),
      await sim.get('/v1/contacts?cursor=zzz'),
    ];
    expect(replies.map((r) => r.status)).toEqual([400, 400, 401, 400]);
    expect(replies[0].body.error.code).toBe('invalid_argument');
    for (const reply of replies) {
      const text = JSON.stringify(reply.body);
      expect(text).not.toContain(BRIDGE);
      expect(text).not.toContain(CONTROL);
      expect(text).not.toMatch(/\bat .+\.ts:\d+/);
    }
  });

  it.each([
    ['the same token for both', { bridgeToken: 'same', controlToken: 'same' }, 'must differ'],
    ['no control token', { bridgeToken: 'b', controlToken: '' }, 'needs a bridge token and a control token'],
  ])('refuses to start with %s', async (_name, tokens, message) => {
    await expect(startBridgeSim({ port: 0, ...tokens })).rejects.toThrow(message);
  });
});
