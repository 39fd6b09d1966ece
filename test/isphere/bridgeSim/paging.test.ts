import { defaultSeed } from '../../../src/isphere/bridgeSim';
import { Sim, withQuery } from './harness';

const LISTS: { name: string; path: string; params: Record<string, string>; id: string }[] = [
  { name: 'contacts', path: '/v1/contacts', params: { include_inactive: 'true' }, id: 'contact_id' },
  { name: 'contacts matching a query', path: '/v1/contacts', params: { query: 'r&d' }, id: 'contact_id' },
  { name: 'groups', path: '/v1/groups', params: { include_archived: 'true' }, id: 'group_id' },
  { name: 'conversations', path: '/v1/conversations', params: {}, id: 'conversation_id' },
  { name: 'messages', path: '/v1/conversations/conv_g_0003/messages', params: {}, id: 'message_id' },
  { name: 'messages since a time', path: '/v1/conversations/conv_g_0001/messages', params: { since: '2026-06-20T00:00:00.000Z' }, id: 'message_id' },
  { name: 'files', path: '/v1/files', params: {}, id: 'file_id' },
];

describe('isphere bridge simulator: paging', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it.each(LISTS)('pages through every one of the $name once, in the order of one big page', async ({ path, params, id }) => {
    const whole = await sim.get(withQuery(path, { ...params, limit: 200 }));
    expect(whole.body.next_cursor).toBeNull();
    const paged = await sim.all(path, { ...params, limit: 4 });
    expect(paged.items.map((item) => item[id])).toEqual(whole.body.items.map((item: any) => item[id]));
    expect(new Set(paged.items.map((item) => item[id])).size).toBe(paged.items.length);
    expect(paged.pages).toBe(Math.max(1, Math.ceil(whole.body.items.length / 4)));
  });

  it('gives 50 to a page by default, and next_cursor null on the last', async () => {
    const seed = defaultSeed();
    seed.contacts = Array.from({ length: 60 }, (_, i) => ({ ...seed.contacts[0], contact_id: `c_${String(i + 1).padStart(4, '0')}` }));
    const big = await new Sim().start({ seed });
    try {
      const first = await big.get('/v1/contacts');
      expect(first.body.items).toHaveLength(50);
      const last = await big.get(`/v1/contacts?cursor=${first.body.next_cursor}`);
      expect(last.body.items).toHaveLength(10);
      expect(last.body.next_cursor).toBeNull();
    } finally {
      await big.stop();
    }
  });

  it('lets a caller change the page size between pages', async () => {
    const first = await sim.get('/v1/contacts?limit=5');
    const rest = await sim.get(`/v1/contacts?limit=200&cursor=${first.body.next_cursor}`);
    expect(first.body.items.length + rest.body.items.length).toBe(26);
  });

  it.each([
    { name: 'another query', next: '/v1/contacts?query=a' },
    { name: 'include_inactive added', next: '/v1/contacts?include_inactive=true' },
    { name: 'another list', next: '/v1/groups' },
  ])('refuses a contacts cursor with $name (400 invalid_cursor)', async ({ next }) => {
    const first = await sim.get('/v1/contacts?limit=3');
    const reply = await sim.get(`${next}${next.includes('?') ? '&' : '?'}cursor=${first.body.next_cursor}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_cursor');
  });

  it.each([
    { name: 'another conversation', next: '/v1/conversations/conv_g_0001/messages' },
    { name: 'a since added', next: '/v1/conversations/conv_g_0003/messages?since=2026-06-01T00:00:00Z' },
  ])('refuses a messages cursor with $name (400 invalid_cursor)', async ({ next }) => {
    const first = await sim.get('/v1/conversations/conv_g_0003/messages?limit=3');
    const reply = await sim.get(`${next}${next.includes('?') ? '&' : '?'}cursor=${first.body.next_cursor}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_cursor');
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['JSON of another shape', Buffer.from('{"a":1}').toString('base64url')],
    ['a forged digest', Buffer.from('{"q":"x","after":["A","c_0001"]}').toString('base64url')],
  ])('refuses a cursor that is %s', async (_name, cursor) => {
    const reply = await sim.get(`/v1/contacts?cursor=${cursor}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_cursor');
  });

  it('a message sent between two pages does not shift the older pages', async () => {
    const first = await sim.get('/v1/conversations/conv_g_0001/messages?limit=5');
    const sent = await sim.post('/v1/messages', { client_message_id: 'paging-1', target_type: 'group', target_id: 'g_0001', content_text: 'in between' });
    expect(sent.status).toBe(201);
    const rest = await sim.all('/v1/conversations/conv_g_0001/messages', { limit: 200, cursor: first.body.next_cursor });
    const seen = [...first.body.items, ...rest.items].map((m) => m.message_id);
    expect(seen).not.toContain(sent.body.message_ref);
    expect(seen).toHaveLength(32);
    expect(new Set(seen).size).toBe(32);
    await sim.control('/_sim/reset');
  });
});
