import { ADMIN_KEY, Harness, WS } from './harness';

describe('task service: tokens, auth and plumbing', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await new Harness().start();
  });
  afterAll(() => h.stop());

  it('issues a token pair with an expiry the ttl sets', async () => {
    const before = Date.now();
    const reply = await h.issue('ag_issue', ['run_issue'], { ttlSeconds: 120 });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(['expiresAt', 'refreshToken', 'token']);
    expect(reply.body.token).not.toEqual(reply.body.refreshToken);
    const expires = Date.parse(reply.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 120_000);
    expect(expires).toBeLessThan(before + 130_000);
    expect(reply.body.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it.each([
    ['no key', undefined],
    ['a wrong key', 'not-the-admin-key'],
    ['an agent token', 'AGENT'],
  ])('refuses token issue with %s (401)', async (_name, key) => {
    const agent = await h.agent('ag_keyless', ['run_k']);
    const token = key === 'AGENT' ? agent.token : key;
    const reply = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_x/tokens`, { token, body: { channels: ['run_k'] } });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('unauthorized');
  });

  it.each([
    ['an unknown field', { channels: [], extra: 1 }, 'extra'],
    ['a malformed channel', { channels: ['bad name'] }, 'channels[0]'],
    ['a missing channel list', {}, 'channels'],
  ])('refuses token issue with %s (invalid_input)', async (_name, body, field) => {
    const reply = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_x/tokens`, { token: ADMIN_KEY, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_input', field });
  });

  it('refresh gives a new pair once; the used refresh token is refused', async () => {
    const first = (await h.issue('ag_refresh', ['run_r'])).body;
    const route = `/api/v1/workspaces/${WS}/agents/ag_refresh/tokens/refresh`;
    const second = await h.request('POST', route, { body: { refreshToken: first.refreshToken } });
    expect(second.status).toBe(200);
    expect(second.body.token).not.toEqual(first.token);
    expect(second.body.refreshToken).not.toEqual(first.refreshToken);
    const again = await h.request('POST', route, { body: { refreshToken: first.refreshToken } });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('unauthorized');
    // The new token works and carries the same boards.
    const list = await h.request('GET', `/api/v1/workspaces/${WS}/agents/ag_refresh/runtime/tasks?channel=run_r`, { token: second.body.token });
    expect(list.status).toBe(200);
  });

  it.each([
    ['unknown', () => 'tsr_nothing'],
    ['an access token', (pair: any) => pair.token],
  ])('refresh refuses a refresh token that is %s (401)', async (_name, pick) => {
    const pair = (await h.issue('ag_refresh2', ['run_r'])).body;
    const reply = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_refresh2/tokens/refresh`, { body: { refreshToken: pick(pair) } });
    expect(reply.status).toBe(401);
  });

  it("refresh refuses another agent's refresh token and leaves it usable by its owner", async () => {
    const pair = (await h.issue('ag_owner', ['run_r'])).body;
    const stolen = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_thief/tokens/refresh`, { body: { refreshToken: pair.refreshToken } });
    expect(stolen.status).toBe(401);
    const own = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_owner/tokens/refresh`, { body: { refreshToken: pair.refreshToken } });
    expect(own.status).toBe(200);
  });

  it('an expired token is 401 token_expired, and an expired refresh token too', async () => {
    const agent = await h.agent('ag_expiry', ['run_e']);
    const pair = (await h.issue('ag_expiry', ['run_e'], { ttlSeconds: 60 })).body;
    expect((await agent.list({ channel: 'run_e' })).status).toBe(200);
    h.skewMs += 3601_000;
    try {
      const reply = await agent.list({ channel: 'run_e' });
      expect(reply.status).toBe(401);
      expect(reply.body.error.code).toBe('token_expired');
      // The refresh token lives 30 days.
      const fresh = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_expiry/tokens/refresh`, { body: { refreshToken: pair.refreshToken } });
      expect(fresh.status).toBe(200);
      h.skewMs += 31 * 24 * 3600_000;
      const late = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_expiry/tokens/refresh`, { body: { refreshToken: fresh.body.refreshToken } });
      expect(late.status).toBe(401);
      expect(late.body.error.code).toBe('token_expired');
    } finally {
      h.skewMs = 0;
    }
  });

  it.each([
    { name: 'no token', kind: undefined, status: 401, code: 'unauthorized' },
    { name: 'an unknown token', kind: 'tsa_unknown', status: 401, code: 'unauthorized' },
    { name: 'the admin key', kind: ADMIN_KEY, status: 401, code: 'unauthorized' },
    { name: "another agent's token", kind: 'OTHER', status: 403, code: 'forbidden' },
    { name: "another workspace's token", kind: 'OTHER_WS', status: 403, code: 'forbidden' },
  ])('a runtime route with $name is $status $code', async ({ kind, status, code }) => {
    const other = await h.agent('ag_other', ['run_a']);
    const otherWs = await h.agent('ag_me', ['run_a'], 'elsewhere');
    const token = kind === 'OTHER' ? other.token : kind === 'OTHER_WS' ? otherWs.token : kind;
    const reply = await h.request('GET', `/api/v1/workspaces/${WS}/agents/ag_me/runtime/tasks?channel=run_a`, { token });
    expect(reply.status).toBe(status);
    expect(reply.body.error.code).toBe(code);
  });

  it("a board the agent is not on, or that does not exist, is channel_not_found listing the agent's boards", async () => {
    await h.agent('ag_elsewhere', ['run_private']);
    const agent = await h.agent('ag_member', ['tm_b', 'run_a']);
    for (const channel of ['run_private', 'run_never']) {
      const reply = await agent.post('get', { channel, number: 1 });
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('channel_not_found');
      expect(reply.body.error.details.channels).toEqual(['run_a', 'tm_b']);
    }
  });

  it('membership is only added: a second issue with other boards keeps the first', async () => {
    const first = await h.agent('ag_grow', ['run_one']);
    await h.agent('ag_grow', ['run_two']);
    expect((await first.list({ channel: 'run_one' })).status).toBe(200);
    expect((await first.list({ channel: 'run_two' })).status).toBe(200);
  });

  it('answers health, and 404 not_found for an unknown route', async () => {
    expect(await h.request('GET', '/healthz')).toEqual({ status: 200, body: { ok: true } });
    const reply = await h.request('GET', '/api/v1/nothing');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
  });

  it('malformed JSON is invalid_input and no stack or token leaves in the answer', async () => {
    const agent = await h.agent('ag_json', ['run_j']);
    const reply = await h.request('POST', `${agent.base}/get`, { token: agent.token, raw: '{"channel": ' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_input');
    expect(JSON.stringify(reply.body)).not.toMatch(/at .*\.ts|node_modules|tsa_/);
  });

  it('the event feed needs the admin key', async () => {
    const agent = await h.agent('ag_feed', ['run_f']);
    expect((await h.request('GET', `/api/v1/workspaces/${WS}/events`, { token: agent.token })).status).toBe(401);
    expect((await h.events()).status).toBe(200);
  });
});
