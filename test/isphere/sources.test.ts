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
    // The local store holds the directory only: messages are not there.
    const none = await agent.call('isphere_receive_messages', { conversation_id: 'conv_d_0001', source_preference: 'local_readonly' });
    expect(none.error).toMatchObject({ code: 'SOURCE_UNAVAILABLE' });
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
      // Nothing else can read messages: auto ends where the bridge did, and says why.
      const messages = await agent.call('isphere_receive_messages', { conversation_id: 'conv_d_0001' });
      expect(messages.error).toMatchObject({ code: 'NOT_LOGGED_IN' });
      expect(messages.data.audit.fallbacks).toEqual([{ source: 'bridge', code: 'NOT_LOGGED_IN' }]);
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
    const failed = await agent.call('isphere_receive_messages', { conversation_id: 'conv_d_0001' });
    // 503 from the bridge: not there right now, so auto moves on, and nothing else can read messages.
    expect(failed.error).toMatchObject({ code: 'SOURCE_UNAVAILABLE', retryable: true });
    expect(failed.data.audit.fallbacks).toEqual([{ source: 'bridge', code: 'SOURCE_UNAVAILABLE' }]);
    expect((await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', limit: 1 })).messages).toHaveLength(1);
  });
});
