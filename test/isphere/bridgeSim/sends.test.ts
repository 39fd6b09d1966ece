import { fileSend, messageSend, sha256, Sim } from './harness';

describe('isphere bridge simulator: sends, their targets and their lookup', () => {
  const sim = new Sim();
  const at = Date.parse('2026-07-09T10:00:00.000Z');
  beforeAll(() => sim.start({ now: () => at }));
  afterAll(() => sim.stop());
  afterEach(() => sim.control('/_sim/reset'));

  it('accepts a message (201), delivers it once, and shows it in its conversation from the logged-in account', async () => {
    const body = messageSend();
    const reply = await sim.post('/v1/messages', body);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      client_message_id: body.client_message_id,
      message_ref: 'm_000300',
      conversation_id: 'conv_d_0001',
      accepted_at: '2026-07-09T10:00:00.000Z',
      duplicate: false,
    });
    const newest = (await sim.get('/v1/conversations/conv_d_0001/messages?limit=1')).body.items[0];
    expect(newest).toMatchObject({
      message_id: 'm_000300',
      sender_id: 'c_0000',
      sender_name: 'Gao Yuan',
      content_type: 'text',
      content_text: body.content_text,
      attachments: [],
      created_at: '2026-07-09T10:00:00.000Z',
    });
    expect(await sim.deliveries()).toEqual([
      {
        client_message_id: body.client_message_id,
        kind: 'message',
        target_type: 'contact',
        target_id: 'c_0001',
        conversation_id: 'conv_d_0001',
        message_ref: 'm_000300',
        content_sha256: sha256(body.content_text),
        accepted_at: '2026-07-09T10:00:00.000Z',
      },
    ]);
  });

  it('answers a repeat with the first answer marked duplicate (200) and delivers nothing more', async () => {
    const body = messageSend();
    const first = await sim.post('/v1/messages', body);
    const again = await sim.post('/v1/messages', body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    expect(await sim.deliveries()).toHaveLength(1);
    expect((await sim.get('/v1/conversations/conv_d_0001/messages?limit=200')).body.items.filter((m: any) => m.content_text === body.content_text)).toHaveLength(1);
  });

  it.each([
    { name: 'other text', change: { content_text: 'Something else.' } },
    { name: 'another target', change: { target_id: 'c_0002' } },
    { name: 'another target type for the same person', change: { target_type: 'conversation', target_id: 'conv_d_0001' } },
  ])('a repeat with $name is 409 client_message_id_conflict', async ({ change }) => {
    const body = messageSend();
    await sim.post('/v1/messages', body);
    const reply = await sim.post('/v1/messages', { ...body, ...change });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('client_message_id_conflict');
    expect(await sim.deliveries()).toHaveLength(1);
  });

  it('a client_message_id used for a message conflicts with a file send, and the other way round', async () => {
    const body = messageSend();
    await sim.post('/v1/messages', body);
    expect((await sim.post('/v1/files', fileSend({ client_message_id: body.client_message_id }))).body.error.code).toBe('client_message_id_conflict');
    const sent = fileSend();
    await sim.post('/v1/files', sent);
    expect((await sim.post('/v1/messages', messageSend({ client_message_id: sent.client_message_id }))).body.error.code).toBe('client_message_id_conflict');
  });

  it.each([
    { target_type: 'contact', target_id: 'c_0002', conversation: 'conv_d_0002' },
    { target_type: 'contact', target_id: 'c_0029', conversation: 'conv_d_0009' },
    { target_type: 'group', target_id: 'g_0003', conversation: 'conv_g_0003' },
    { target_type: 'conversation', target_id: 'conv_g_0008', conversation: 'conv_g_0008' },
    { target_type: 'conversation', target_id: 'conv_d_0010', conversation: 'conv_d_0010' },
  ])('sends to $target_type $target_id in $conversation', async ({ target_type, target_id, conversation }) => {
    const reply = await sim.post('/v1/messages', messageSend({ target_type, target_id }));
    expect(reply.status).toBe(201);
    expect(reply.body.conversation_id).toBe(conversation);
  });

  it('writing to a contact without a conversation opens one, found afterwards', async () => {
    const reply = await sim.post('/v1/messages', messageSend({ target_id: 'c_0004' }));
    expect(reply.status).toBe(201);
    expect(reply.body.conversation_id).toBe('conv_d_0011');
    const listed = (await sim.get('/v1/conversations?conversation_type=direct&query=zhang')).body.items;
    expect(listed).toContainEqual({ conversation_id: 'conv_d_0011', conversation_type: 'direct', display_name: 'Zhang Wei', peer_id: 'c_0004' });
    const again = await sim.post('/v1/messages', messageSend({ target_id: 'c_0004' }));
    expect(again.body.conversation_id).toBe('conv_d_0011');
  });

  it.each([
    { target_type: 'contact', target_id: 'c_9999' },
    { target_type: 'contact', target_id: 'c_0000' },
    { target_type: 'group', target_id: 'g_9999' },
    { target_type: 'conversation', target_id: 'conv_x' },
    { target_type: 'group', target_id: 'c_0001' },
  ])('an unknown $target_type $target_id is 404 target_not_found', async ({ target_type, target_id }) => {
    for (const [route, body] of [
      ['/v1/messages', messageSend({ target_type, target_id })],
      ['/v1/files', fileSend({ target_type, target_id })],
    ] as const) {
      const reply = await sim.post(route, body);
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('target_not_found');
    }
    expect(await sim.deliveries()).toEqual([]);
  });

  it.each([
    { name: 'an inactive contact', target_type: 'contact', target_id: 'c_0005' },
    { name: 'an archived group', target_type: 'group', target_id: 'g_0007' },
    { name: "an inactive contact's conversation", target_type: 'conversation', target_id: 'conv_d_0004' },
    { name: "an archived group's conversation", target_type: 'conversation', target_id: 'conv_g_0007' },
    { name: 'the system conversation', target_type: 'conversation', target_id: 'conv_s_0001' },
  ])('$name is 409 target_unavailable', async ({ target_type, target_id }) => {
    for (const [route, body] of [
      ['/v1/messages', messageSend({ target_type, target_id })],
      ['/v1/files', fileSend({ target_type, target_id })],
    ] as const) {
      const reply = await sim.post(route, body);
      expect(reply.status).toBe(409);
      expect(reply.body.error.code).toBe('target_unavailable');
    }
    expect(await sim.deliveries()).toEqual([]);
  });

  it.each([
    { name: 'no client_message_id', body: messageSend({ client_message_id: undefined }), field: 'client_message_id' },
    { name: 'a client_message_id with a space', body: messageSend({ client_message_id: 'a b' }), field: 'client_message_id' },
    { name: 'a client_message_id of 129 characters', body: messageSend({ client_message_id: 'x'.repeat(129) }), field: 'client_message_id' },
    { name: 'empty text', body: messageSend({ content_text: '' }), field: 'content_text' },
    { name: '20,001 characters', body: messageSend({ content_text: 'x'.repeat(20_001) }), field: 'content_text' },
    { name: 'an unknown target type', body: messageSend({ target_type: 'user' }), field: 'target_type' },
    { name: 'an unknown field', body: messageSend({ approval_id: 'a1' }), field: 'approval_id' },
  ])('a message with $name is 400 invalid_argument', async ({ body, field }) => {
    const reply = await sim.post('/v1/messages', body);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_argument');
    expect(reply.body.error.message.startsWith(`${field}:`)).toBe(true);
  });

  it('takes 20,000 characters counted as characters, and a client_message_id of every allowed kind', async () => {
    const reply = await sim.post('/v1/messages', messageSend({ content_text: '报'.repeat(10_000) + '😀'.repeat(10_000), client_message_id: `A-z_0.9:${'x'.repeat(120)}` }));
    expect(reply.status).toBe(201);
  });

  it('looks a send up by client_message_id: message, file, or 404 send_not_found', async () => {
    const m = messageSend();
    const f = fileSend();
    const sentMessage = (await sim.post('/v1/messages', m)).body;
    const sentFile = (await sim.post('/v1/files', f)).body;
    expect(await sim.get(`/v1/sends/${m.client_message_id}`)).toMatchObject({
      status: 200,
      body: { client_message_id: m.client_message_id, kind: 'message', message_ref: sentMessage.message_ref, accepted_at: sentMessage.accepted_at },
    });
    const found = await sim.get(`/v1/sends/${f.client_message_id}`);
    expect(found.body).toEqual({ client_message_id: f.client_message_id, kind: 'file', file_ref: sentFile.file_ref, accepted_at: sentFile.accepted_at });
    const missing = await sim.get('/v1/sends/never-sent');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('send_not_found');
    expect((await sim.get('/v1/sends/bad%20id')).status).toBe(400);
  });

  it('a refused send is never found by the lookup', async () => {
    const body = messageSend({ target_id: 'c_0005' });
    expect((await sim.post('/v1/messages', body)).status).toBe(409);
    expect((await sim.get(`/v1/sends/${body.client_message_id}`)).status).toBe(404);
  });
});
