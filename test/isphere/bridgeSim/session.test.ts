import { CONTROL, Sim } from './harness';

const DATA_ROUTES: [string, string, unknown?][] = [
  ['GET', '/v1/contacts'],
  ['GET', '/v1/groups'],
  ['GET', '/v1/conversations'],
  ['GET', '/v1/conversations/conv_d_0001/messages'],
  ['GET', '/v1/files'],
  ['GET', '/v1/files/f_0001/content'],
  ['POST', '/v1/messages', { client_message_id: 'session-1', target_type: 'contact', target_id: 'c_0001', content_text: 'hi' }],
  ['POST', '/v1/files', { client_message_id: 'session-2', target_type: 'contact', target_id: 'c_0001', file_name: 'a.txt', content_base64: 'aGk=' }],
  ['GET', '/v1/sends/session-1'],
];

describe('isphere bridge simulator: the session', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());
  afterEach(() => sim.control('/_sim/reset'));

  it('status names the logged-in account and the bridge version', async () => {
    const reply = await sim.get('/v1/status');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ logged_in: true, account: { account_id: 'c_0000', display_name: 'Gao Yuan' }, bridge_version: expect.stringMatching(/\S/) });
  });

  it('after the person logs out, status says so and answers 200', async () => {
    expect(await sim.control('/_sim/session', { logged_in: false })).toMatchObject({ status: 200, body: { logged_in: false } });
    const reply = await sim.get('/v1/status');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ logged_in: false, account: null });
  });

  it.each(DATA_ROUTES.map(([method, path, body]) => ({ method, path, body })))('$method $path is 409 not_logged_in while nobody is logged in, and sends nothing', async ({ method, path, body }) => {
    await sim.control('/_sim/session', { logged_in: false });
    const reply = await sim.request(method, path, { body });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('not_logged_in');
    expect(await sim.deliveries()).toEqual([]);
  });

  it('logging back in opens the data routes again', async () => {
    await sim.control('/_sim/session', { logged_in: false });
    await sim.control('/_sim/session', { logged_in: true });
    expect((await sim.get('/v1/contacts')).status).toBe(200);
  });

  it.each([
    ['a missing flag', {}, 'logged_in'],
    ['a string flag', { logged_in: 'no' }, 'logged_in'],
    ['an unknown field', { logged_in: true, user: 'x' }, 'user'],
  ])('/_sim/session refuses %s naming the field', async (_name, body, field) => {
    const reply = await sim.request('POST', '/_sim/session', { token: CONTROL, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_argument');
    expect(reply.body.error.message.startsWith(`${field}:`)).toBe(true);
  });

  it('a simulator started logged out stays logged out after a reset', async () => {
    const out = await new Sim().start({ loggedIn: false });
    try {
      expect((await out.get('/v1/status')).body.logged_in).toBe(false);
      await out.control('/_sim/session', { logged_in: true });
      expect((await out.get('/v1/contacts')).status).toBe(200);
      await out.control('/_sim/reset');
      expect((await out.get('/v1/contacts')).body.error.code).toBe('not_logged_in');
    } finally {
      await out.stop();
    }
  });
});
