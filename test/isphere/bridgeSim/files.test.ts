import { createHash } from 'node:crypto';
import { BRIDGE, ids, Sim, withQuery } from './harness';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('isphere bridge simulator: files', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('lists every file, newest first, with the fields of the protocol', async () => {
    const reply = await sim.get('/v1/files?limit=200');
    expect(reply.status).toBe(200);
    const items = reply.body.items;
    expect(items).toHaveLength(21);
    expect(items.every((f: any, i: number) => i === 0 || items[i - 1].created_at >= f.created_at)).toBe(true);
    expect(Object.keys(items[0]).sort()).toEqual(['conversation_id', 'created_at', 'file_id', 'file_name', 'message_id', 'mime_type', 'sha256', 'size_bytes']);
  });

  it.each([
    { name: 'a conversation', params: { conversation_id: 'conv_g_0005' }, expected: ['load-test-results.csv', 'flamegraph.png', 'schema-migration.sql'] },
    { name: 'a conversation with none', params: { conversation_id: 'conv_d_0004' }, expected: [] },
    { name: 'the system conversation', params: { conversation_id: 'conv_s_0001' }, expected: ['iSphere-5.2-release-notes.pdf'] },
  ])('filters files by $name', async ({ params, expected }) => {
    const reply = await sim.get(withQuery('/v1/files', params));
    expect(reply.status).toBe(200);
    expect(ids(reply, 'file_name').sort()).toEqual([...expected].sort());
    expect(reply.body.items.every((f: any) => f.conversation_id === params.conversation_id)).toBe(true);
  });

  it('filters files by message, with or without its conversation', async () => {
    const file = (await sim.get('/v1/files?conversation_id=conv_g_0001')).body.items[0];
    for (const params of [{ message_id: file.message_id }, { message_id: file.message_id, conversation_id: 'conv_g_0001' }]) {
      const reply = await sim.get(withQuery('/v1/files', params));
      expect(reply.body.items).toEqual([file]);
    }
  });

  it.each([
    { params: { conversation_id: 'conv_x' }, code: 'conversation_not_found' },
    { params: { message_id: 'm_999999' }, code: 'message_not_found' },
    { params: { message_id: 'm_000001', conversation_id: 'conv_d_0001' }, code: 'message_not_found' },
  ])('an unknown filter $params is 404 $code', async ({ params, code }) => {
    const reply = await sim.get(withQuery('/v1/files', params));
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe(code);
  });

  it('serves every file with its bytes, length and sha256', async () => {
    const files = (await sim.get('/v1/files?limit=200')).body.items;
    for (const f of files) {
      const res = await fetch(`${sim.url}/v1/files/${f.file_id}/content`, { headers: { authorization: `Bearer ${BRIDGE}` } });
      expect(res.status).toBe(200);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(Number(res.headers.get('content-length'))).toBe(f.size_bytes);
      expect(bytes.length).toBe(f.size_bytes);
      expect(res.headers.get('x-sha256')).toBe(f.sha256);
      expect(sha256(bytes)).toBe(f.sha256);
    }
    expect(Math.max(...files.map((f: any) => f.size_bytes))).toBe(2 * 1024 * 1024);
    expect(Math.min(...files.map((f: any) => f.size_bytes))).toBe(0);
  });

  it('an unknown file is 404 file_not_found', async () => {
    const reply = await sim.get('/v1/files/f_9999/content');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('file_not_found');
  });
});
