import { BRIDGE, fileSend, sha256, Sim } from './harness';

describe('isphere bridge simulator: sending files', () => {
  const sim = new Sim();
  const at = Date.parse('2026-07-09T10:00:00.000Z');
  beforeAll(() => sim.start({ now: () => at }));
  afterAll(() => sim.stop());
  afterEach(() => sim.control('/_sim/reset'));

  it('accepts a file (201), serves its bytes under file_ref, and shows it in files and messages', async () => {
    const bytes = Buffer.from('budget,amount\nq3,1200\n');
    const body = fileSend({ file_name: 'q3.csv', content_base64: bytes.toString('base64'), caption: 'Q3 numbers' });
    const reply = await sim.post('/v1/files', body);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      client_message_id: body.client_message_id,
      file_ref: 'f_0022',
      conversation_id: 'conv_g_0001',
      sha256: sha256(bytes),
      size_bytes: bytes.length,
      accepted_at: '2026-07-09T10:00:00.000Z',
      duplicate: false,
    });
    const res = await fetch(`${sim.url}/v1/files/f_0022/content`, { headers: { authorization: `Bearer ${BRIDGE}` } });
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    expect(res.headers.get('x-sha256')).toBe(sha256(bytes));
    const listed = (await sim.get('/v1/files?conversation_id=conv_g_0001')).body.items[0];
    expect(listed).toMatchObject({ file_id: 'f_0022', file_name: 'q3.csv', mime_type: 'text/csv', size_bytes: bytes.length, sha256: sha256(bytes) });
    const newest = (await sim.get('/v1/conversations/conv_g_0001/messages?limit=1')).body.items[0];
    expect(newest).toMatchObject({ message_id: listed.message_id, sender_id: 'c_0000', content_type: 'file', content_text: 'Q3 numbers', attachments: [{ file_id: 'f_0022', file_name: 'q3.csv', size_bytes: bytes.length, mime_type: 'text/csv' }] });
    expect(await sim.deliveries()).toEqual([expect.objectContaining({ kind: 'file', file_ref: 'f_0022', content_sha256: sha256(bytes), target_type: 'group', target_id: 'g_0001' })]);
  });

  it('answers a repeated file with the first answer (200) and refuses one with other bytes, name or caption (409)', async () => {
    const body = fileSend();
    const first = await sim.post('/v1/files', body);
    const again = await sim.post('/v1/files', body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    for (const change of [{ content_base64: Buffer.from('other').toString('base64') }, { file_name: 'other.txt' }, { caption: 'now with a caption' }]) {
      const reply = await sim.post('/v1/files', { ...body, ...change });
      expect(reply.status).toBe(409);
      expect(reply.body.error.code).toBe('client_message_id_conflict');
    }
    expect(await sim.deliveries()).toHaveLength(1);
  });

  it('takes a file of exactly 20 MiB and refuses one byte more with 413 file_too_large', async () => {
    const limit = 20 * 1024 * 1024;
    const over = await sim.post('/v1/files', fileSend({ content_base64: Buffer.alloc(limit + 1, 1).toString('base64') }));
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('file_too_large');
    const exact = await sim.post('/v1/files', fileSend({ content_base64: Buffer.alloc(limit, 1).toString('base64') }));
    expect(exact.status).toBe(201);
    expect(exact.body.size_bytes).toBe(limit);
    expect(await sim.deliveries()).toHaveLength(1);
  });

  it('refuses a body over the 30 MiB limit with 413 file_too_large', async () => {
    const reply = await sim.post('/v1/files', fileSend({ caption: 'x', content_base64: 'A'.repeat(31 * 1024 * 1024) }));
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe('file_too_large');
  });

  it.each([
    { name: 'a path for a name', change: { file_name: '../etc/passwd' }, field: 'file_name' },
    { name: 'a control character in the name', change: { file_name: 'a\u0007.txt' }, field: 'file_name' },
    { name: 'content that is not base64', change: { content_base64: 'not base64!' }, field: 'content_base64' },
    { name: 'unpadded base64', change: { content_base64: 'aGk' }, field: 'content_base64' },
    { name: 'an unknown field', change: { dry_run: true }, field: 'dry_run' },
  ])('a file with $name is 400 invalid_argument', async ({ change, field }) => {
    const reply = await sim.post('/v1/files', fileSend(change));
    expect(reply.status).toBe(400);
    expect(reply.body.error.message.startsWith(`${field}:`)).toBe(true);
  });

});
