import { Sim } from './harness';

/** The simulator's controls added for Dipper's own tests: one-record lookups, inbound messages, dedupe off, a bridge that hangs after the work. */
const sim = new Sim();
beforeAll(() => sim.start());
beforeEach(() => sim.control('/_sim/reset', {}));
afterAll(() => sim.stop());

const send = (id: string) => sim.post('/v1/messages', { client_message_id: id, target_type: 'contact', target_id: 'c_0003', content_text: 'Hello.' });

it('looks up one contact, group or conversation, inactive and archived ones too', async () => {
  expect((await sim.get('/v1/contacts/c_0005')).body).toMatchObject({ contact_id: 'c_0005', active: false });
  expect((await sim.get('/v1/groups/g_0007')).body).toMatchObject({ group_id: 'g_0007', archived: true });
  expect((await sim.get('/v1/conversations/conv_g_0001')).body).toEqual({ conversation_id: 'conv_g_0001', conversation_type: 'group', display_name: 'Finance Team', peer_id: 'g_0001' });
  for (const [path, code] of [
    ['/v1/contacts/c_9999', 'contact_not_found'],
    ['/v1/groups/g_9999', 'group_not_found'],
    ['/v1/conversations/conv_x', 'conversation_not_found'],
  ]) {
    expect(await sim.get(path)).toMatchObject({ status: 404, body: { error: { code } } });
  }
});

it('takes inbound messages, newest first in their conversation, and refuses an unknown conversation', async () => {
  const got = await sim.control('/_sim/messages', { conversation_id: 'conv_d_0001', content_text: 'From the other side.', count: 3, created_at: '2026-09-01T00:00:00Z' });
  expect(got.status).toBe(201);
  const page = await sim.get('/v1/conversations/conv_d_0001/messages?limit=3');
  expect(page.body.items.map((m: any) => m.message_id)).toEqual([...got.body.message_ids].reverse());
  expect(page.body.items[0]).toMatchObject({ sender_id: 'c_0001', sender_name: 'Li Wei', content_text: 'From the other side.', created_at: '2026-09-01T00:00:00.002Z' });
  expect((await sim.control('/_sim/messages', { conversation_id: 'conv_x', content_text: 'x' })).status).toBe(404);
});

it('delivers a repeated client message id again with dedupe off, and answers it from the first send with dedupe on', async () => {
  await send('cm-1');
  expect((await send('cm-1')).body.duplicate).toBe(true);
  expect(await sim.deliveries()).toHaveLength(1);
  expect((await sim.control('/_sim/config', { dedupe: false })).body).toEqual({ dedupe: false });
  expect((await send('cm-1')).status).toBe(201);
  expect((await sim.deliveries()).filter((d) => d.client_message_id === 'cm-1')).toHaveLength(2);
  await sim.control('/_sim/reset', {});
  await send('cm-2');
  expect((await send('cm-2')).body.duplicate).toBe(true);
});

it('accepts and never answers with accept_then_hang; the lookup finds the send', async () => {
  await sim.control('/_sim/faults', { route: 'messages', mode: 'accept_then_hang', count: 1 });
  const hung = await fetch(`${sim.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: 'Bearer bridge-token-for-tests-0123456789', 'content-type': 'application/json' },
    body: JSON.stringify({ client_message_id: 'cm-hang', target_type: 'contact', target_id: 'c_0003', content_text: 'Hello.' }),
    signal: AbortSignal.timeout(500),
  }).catch((err: Error) => err.name);
  expect(hung).toBe('TimeoutError');
  expect((await sim.get('/v1/sends/cm-hang')).body).toMatchObject({ client_message_id: 'cm-hang', kind: 'message' });
  expect(await sim.deliveries()).toHaveLength(1);
});
