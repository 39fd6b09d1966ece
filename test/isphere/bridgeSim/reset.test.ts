import { CONTROL, freshId, Sim } from './harness';

describe('isphere bridge simulator: deliveries and reset', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('lists deliveries in the order accepted', async () => {
    const first = freshId('order');
    const second = freshId('order');
    await sim.post('/v1/messages', { client_message_id: first, target_type: 'group', target_id: 'g_0008', content_text: 'one' });
    await sim.post('/v1/files', { client_message_id: second, target_type: 'contact', target_id: 'c_0003', file_name: 'b.txt', content_base64: 'Yg==' });
    expect((await sim.deliveries()).map((d) => [d.client_message_id, d.kind])).toEqual([
      [first, 'message'],
      [second, 'file'],
    ]);
    await sim.control('/_sim/reset');
  });

  it('reset returns to the seed: sends, deliveries, opened conversations, session and faults', async () => {
    const seeded = {
      conversations: (await sim.get('/v1/conversations?limit=200')).body,
      messages: (await sim.get('/v1/conversations/conv_d_0001/messages?limit=200')).body,
      files: (await sim.get('/v1/files?limit=200')).body,
    };
    const id = freshId('reset');
    const body = { client_message_id: id, target_type: 'contact', target_id: 'c_0001', content_text: 'before the reset' };
    await sim.post('/v1/messages', body);
    await sim.post('/v1/messages', { ...body, client_message_id: freshId('reset'), target_id: 'c_0004' });
    await sim.post('/v1/files', { client_message_id: freshId('reset'), target_type: 'contact', target_id: 'c_0001', file_name: 'a.txt', content_base64: 'YQ==' });
    await sim.control('/_sim/faults', { route: 'reads', mode: 'fail', count: 3 });
    await sim.control('/_sim/session', { logged_in: false });

    const reply = await sim.request('POST', '/_sim/reset', { token: CONTROL });
    expect(reply).toMatchObject({ status: 200, body: { reset: true } });

    expect(await sim.deliveries()).toEqual([]);
    expect((await sim.get('/v1/conversations?limit=200')).body).toEqual(seeded.conversations);
    expect((await sim.get('/v1/conversations/conv_d_0001/messages?limit=200')).body).toEqual(seeded.messages);
    expect((await sim.get('/v1/files?limit=200')).body).toEqual(seeded.files);
    expect((await sim.get(`/v1/sends/${id}`)).status).toBe(404);
    // The same client_message_id is new again, so it is delivered again.
    expect((await sim.post('/v1/messages', body)).status).toBe(201);
  });

  it('reset refuses fields it does not know', async () => {
    const reply = await sim.request('POST', '/_sim/reset', { token: CONTROL, body: { keep: 'sends' } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/^keep:/);
  });
});
