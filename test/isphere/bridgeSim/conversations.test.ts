import { ids, Sim, withQuery } from './harness';

const newestFirst = (items: any[]) =>
  items.every((m, i) => i === 0 || items[i - 1].created_at > m.created_at || (items[i - 1].created_at === m.created_at && items[i - 1].message_id > m.message_id));

describe('isphere bridge simulator: conversations and messages', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('lists every conversation by display name, with its type and peer', async () => {
    const reply = await sim.get('/v1/conversations?limit=200');
    expect(reply.status).toBe(200);
    expect(reply.body.items).toHaveLength(19);
    expect(reply.body.items.filter((c: any) => c.display_name === 'Li Wei')).toEqual([
      { conversation_id: 'conv_d_0001', conversation_type: 'direct', display_name: 'Li Wei', peer_id: 'c_0001' },
      { conversation_id: 'conv_d_0002', conversation_type: 'direct', display_name: 'Li Wei', peer_id: 'c_0002' },
    ]);
    expect(reply.body.items.find((c: any) => c.conversation_type === 'system')).toEqual({
      conversation_id: 'conv_s_0001',
      conversation_type: 'system',
      display_name: 'System Notices',
      peer_id: null,
    });
  });

  it.each([
    { conversation_type: 'direct', query: undefined, count: 10 },
    { conversation_type: 'group', query: undefined, count: 8 },
    { conversation_type: 'system', query: undefined, count: 1 },
    { conversation_type: 'group', query: 'PHOENIX', count: 2 },
    { conversation_type: 'direct', query: 'phoenix', count: 0 },
    { conversation_type: undefined, query: 'li wei', count: 2 },
  ])('filters conversations by type $conversation_type and query $query', async ({ conversation_type, query, count }) => {
    const reply = await sim.get(withQuery('/v1/conversations', { conversation_type, query }));
    expect(reply.status).toBe(200);
    expect(reply.body.items).toHaveLength(count);
    if (conversation_type) expect(reply.body.items.every((c: any) => c.conversation_type === conversation_type)).toBe(true);
  });

  it('refuses an unknown conversation type', async () => {
    const reply = await sim.get('/v1/conversations?conversation_type=channel');
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/^conversation_type:/);
  });

  it('answers a conversation with its messages, newest first, ties broken by id', async () => {
    const reply = await sim.get('/v1/conversations/conv_g_0003/messages?limit=200');
    expect(reply.status).toBe(200);
    expect(reply.body.conversation).toEqual({ conversation_id: 'conv_g_0003', conversation_type: 'group', display_name: 'Project Phoenix', peer_id: 'g_0003' });
    const items = reply.body.items;
    expect(items.length).toBe(37);
    expect(newestFirst(items)).toBe(true);
    expect(items.every((m: any) => m.conversation_id === 'conv_g_0003')).toBe(true);
    expect(Object.keys(items[0]).sort()).toEqual(
      ['attachments', 'content_text', 'content_type', 'conversation_id', 'created_at', 'message_id', 'raw_ref', 'received_at', 'sender_id', 'sender_name'].sort(),
    );
    expect(items[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('orders two messages of the same millisecond by id, and pages between them', async () => {
    const all = (await sim.get('/v1/conversations/conv_d_0008/messages?limit=200')).body.items;
    const tie = all.findIndex((m: any, i: number) => i > 0 && all[i - 1].created_at === m.created_at);
    expect(tie).toBeGreaterThan(0);
    expect(all[tie - 1].message_id > all[tie].message_id).toBe(true);
    const first = await sim.get(`/v1/conversations/conv_d_0008/messages?limit=${tie}`);
    const rest = await sim.get(`/v1/conversations/conv_d_0008/messages?limit=200&cursor=${first.body.next_cursor}`);
    expect([...ids(first, 'message_id'), ...ids(rest, 'message_id')]).toEqual(all.map((m: any) => m.message_id));
  });

  it('keeps only messages created at or after since', async () => {
    const all = (await sim.get('/v1/conversations/conv_g_0001/messages?limit=200')).body.items;
    const pivot = all[10].created_at;
    const reply = await sim.get(`/v1/conversations/conv_g_0001/messages?limit=200&since=${encodeURIComponent(pivot)}`);
    expect(reply.body.items).toEqual(all.filter((m: any) => m.created_at >= pivot));
    expect(reply.body.items.at(-1).created_at).toBe(pivot);
  });

  it('reads since in any offset', async () => {
    const utc = await sim.get('/v1/conversations/conv_g_0001/messages?limit=200&since=2026-07-01T00:00:00Z');
    const shanghai = await sim.get(`/v1/conversations/conv_g_0001/messages?limit=200&since=${encodeURIComponent('2026-07-01T08:00:00+08:00')}`);
    expect(utc.body.items.length).toBeGreaterThan(0);
    expect(shanghai.body.items).toEqual(utc.body.items);
  });

  it.each(['yesterday', '2026-07-01', '2026-13-01T00:00:00Z', '2026-07-01 00:00:00Z'])('refuses since=%s', async (since) => {
    const reply = await sim.get(`/v1/conversations/conv_g_0001/messages?since=${encodeURIComponent(since)}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/^since:/);
  });

  it('lists a message attachments as the files list describes them', async () => {
    const messages = (await sim.get('/v1/conversations/conv_g_0005/messages?limit=200')).body.items;
    const both = messages.find((m: any) => m.attachments.length === 2);
    expect(both.attachments.map((a: any) => a.file_name)).toEqual(['load-test-results.csv', 'flamegraph.png']);
    const files = (await sim.get(`/v1/files?message_id=${both.message_id}`)).body.items;
    for (const a of both.attachments) {
      const f = files.find((x: any) => x.file_id === a.file_id);
      expect(a).toEqual({ file_id: f.file_id, file_name: f.file_name, size_bytes: f.size_bytes, mime_type: f.mime_type });
    }
  });

  it('seeds every content type, notices in the system conversation', async () => {
    const types = new Set<string>();
    for (const c of (await sim.get('/v1/conversations?limit=200')).body.items) {
      for (const m of (await sim.get(`/v1/conversations/${c.conversation_id}/messages?limit=200`)).body.items) types.add(m.content_type);
    }
    expect([...types].sort()).toEqual(['file', 'image', 'notify', 'rich', 'text', 'unknown']);
    const system = (await sim.get('/v1/conversations/conv_s_0001/messages')).body.items;
    expect(system.every((m: any) => m.sender_id === null)).toBe(true);
  });

  it('a conversation it does not know is 404 conversation_not_found', async () => {
    const reply = await sim.get('/v1/conversations/conv_d_9999/messages');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('conversation_not_found');
  });
});
