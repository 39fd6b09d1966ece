import { Harness, titles, WS } from './harness';

describe('task service: persistence', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await new Harness().start();
  });
  afterAll(() => h.stop());

  it('keeps tokens, boards, tasks, tombstones, receipts and events across a restart on the same file', async () => {
    const board = 'run_persist';
    const me = await h.agent('ag_me', [board]);
    const pair = (await h.issue('ag_me', [board])).body;
    const idem = { channel: board, tasks: titles('kept'), runId: 'run_p', idempotencyKey: 'k' };
    const first = await me.post('', idem);
    const [parent, gone] = await me.create({ channel: board, tasks: titles('parent', 'gone') });
    await me.post('set-claim', { channel: board, numbers: [parent], claimed: true });
    await me.post('add-checkpoint', { channel: board, number: parent, summary: 'saved' });
    await me.post('delete', { channel: board, number: gone });
    const before = await me.get(board, parent);
    const events = (await h.events()).body.events;

    await h.restart();

    expect(await me.get(board, parent)).toEqual(before);
    expect((await me.post('get', { channel: board, number: gone })).status).toBe(410);
    expect((await h.events()).body.events).toEqual(events);
    const replay = await me.post('', idem);
    expect(replay.body).toEqual({ tasks: first.body.tasks, reused: true });
    expect(await me.create({ channel: board, tasks: titles('after restart') })).toEqual([gone + 1]);
    const refreshed = await h.request('POST', `/api/v1/workspaces/${WS}/agents/ag_me/tokens/refresh`, { body: { refreshToken: pair.refreshToken } });
    expect(refreshed.status).toBe(200);
  });
});
