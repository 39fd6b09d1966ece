import { closeAll } from '../support/team';
import type { AgentClient } from '../support/clients';
import { isphereAgent, sim } from './support';

/**
 * Choosing a source through the tools: auto reads the bridge, falls back to
 * the local store when the bridge has nobody logged in (and says so), and a
 * named source is used alone.
 */
afterAll(async () => {
  await sim.logIn(true);
  await closeAll();
});

let agent: AgentClient;
beforeAll(async () => {
  await sim.control('POST', '/reset', {});
  agent = (await isphereAgent()).isphere;
});

describe('source_preference', () => {
  it('reads the local store when asked, with the same ids the bridge has', async () => {
    const local = await agent.ok('isphere_search_contacts', { query: 'li wei', source_preference: 'local_readonly' });
    expect(local.contacts.map((c: any) => [c.contact_id, c.source])).toEqual([
      ['c_0001', 'local_readonly'],
      ['c_0002', 'local_readonly'],
    ]);
    expect(local.audit).toMatchObject({ source: 'local_readonly', fallbacks: [] });
    // Messages too, the same ones in the same order; files are listed but cannot be downloaded from an export.
    const fromStore = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', source_preference: 'local_readonly', limit: 5 });
    const fromBridge = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', limit: 5 });
    expect(fromStore.messages.map((m: any) => m.message_id)).toEqual(fromBridge.messages.map((m: any) => m.message_id));
    expect(fromStore.messages.every((m: any) => m.source === 'local_readonly')).toBe(true);
    const files = await agent.ok('isphere_receive_files', { conversation_id: 'conv_g_0001', source_preference: 'local_readonly' });
    expect(files.files.every((f: any) => f.source === 'local_readonly' && f.download_ref === null)).toBe(true);
    const noDownload = await agent.call('isphere_receive_files', { mode: 'download', file_id: files.files[0].file_id, message_id: files.files[0].message_id, output_dir: '/tmp/x', dry_run: false, source_preference: 'local_readonly' });
    expect(noDownload.error).toMatchObject({ code: 'DRY_RUN_ONLY', details: { reason: 'source_cannot_download' } });
  });

  it('answers SOURCE_UNAVAILABLE for uia and network, which this platform does not have', async () => {
    for (const source_preference of ['uia', 'network']) {
      const got = await agent.call('isphere_search_groups', { query: 'Finance', source_preference });
      expect(got.error).toMatchObject({ code: 'SOURCE_UNAVAILABLE' });
      expect(got.data.audit).toMatchObject({ source: null, result: 'error' });
    }
  });

  it('falls back from a bridge with nobody logged in to the local store, reporting it; a named bridge says NOT_LOGGED_IN', async () => {
    await sim.logIn(false);
    try {
      const got = await agent.ok('isphere_search_contacts', { query: 'Wang Fang' });
      expect(got.contacts.map((c: any) => c.contact_id)).toEqual(['c_0003']);
      expect(got.contacts[0].source).toBe('local_readonly');
      expect(got.audit).toMatchObject({ source: 'local_readonly', fallbacks: [{ source: 'bridge', code: 'NOT_LOGGED_IN' }] });

      const bridge = await agent.call('isphere_search_contacts', { query: 'Wang Fang', source_preference: 'bridge' });
      expect(bridge.error).toMatchObject({ code: 'NOT_LOGGED_IN', retryable: false });
      const messages = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', limit: 2 });
      expect(messages.audit).toMatchObject({ source: 'local_readonly', fallbacks: [{ source: 'bridge', code: 'NOT_LOGGED_IN' }] });
      // A send has only the bridge: nobody logged in is NOT_LOGGED_IN, and nothing is planned elsewhere.
      const send = await agent.call('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'x' });
      expect(send.error).toMatchObject({ code: 'NOT_LOGGED_IN' });
    } finally {
      await sim.logIn(true);
    }
  });

  it('keeps a list on the source that began it: a cursor from the local store is refused with the bridge named', async () => {
    const page = await agent.ok('isphere_search_contacts', { query: 'a', limit: 2, source_preference: 'local_readonly' });
    expect(page.next_cursor).toEqual(expect.any(String));
    const next = await agent.ok('isphere_search_contacts', { query: 'a', limit: 2, cursor: page.next_cursor });
    expect(next.audit.source).toBe('local_readonly');
    expect(next.contacts.every((c: any) => c.source === 'local_readonly')).toBe(true);
    expect(await agent.fail('isphere_search_contacts', { query: 'a', limit: 2, cursor: page.next_cursor, source_preference: 'bridge' })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'cursor' },
    });
  });

  it('moves past a bridge that answers 503 (it cannot reach the client), and reads again once it can', async () => {
    await sim.control('POST', '/faults', { route: 'reads', mode: 'fail', count: 1 });
    // 503 from the bridge: not there right now, so auto moves on to the local store, and says so.
    const failed = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', limit: 1 });
    expect(failed.audit).toMatchObject({ source: 'local_readonly', fallbacks: [{ source: 'bridge', code: 'SOURCE_UNAVAILABLE' }] });
    await sim.control('POST', '/faults', { route: 'reads', mode: 'fail', count: 1 });
    const named = await agent.call('isphere_receive_messages', { conversation_id: 'conv_d_0001', source_preference: 'bridge' });
    expect(named.error).toMatchObject({ code: 'SOURCE_UNAVAILABLE', retryable: true });
    expect((await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', limit: 1 })).messages).toHaveLength(1);
  });
});
