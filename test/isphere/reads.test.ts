import { closeAll } from '../support/team';
import type { AgentClient } from '../support/clients';
import { allPages, isphereAgent, readableContact, readableGroup, sim } from './support';

/**
 * The four read tools over the official MCP client, the real gateway and the
 * bridge simulator (every answer, errors included, is checked by the client
 * against the tool's published output schema).
 */
afterAll(closeAll);

let agent: AgentClient;
beforeAll(async () => {
  await sim.control('POST', '/reset', {});
  agent = (await isphereAgent()).isphere;
});

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('the isphere surface', () => {
  it('lists the six tools of its spec with annotations from the registry', async () => {
    const { tools } = await agent.mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'isphere_search_contacts',
      'isphere_search_groups',
      'isphere_receive_messages',
      'isphere_receive_files',
      'isphere_send_message',
      'isphere_send_file',
    ]);
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.isphere_search_contacts).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    // It writes files on the host when downloading.
    expect(hints.isphere_receive_files).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    expect(hints.isphere_send_message).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(tools.every((t) => t.outputSchema?.type === 'object')).toBe(true);
  });
});

describe('isphere_search_contacts', () => {
  it('finds both people named Li Wei on the bridge, with stable ids, confidence and a full audit', async () => {
    const got = await agent.ok('isphere_search_contacts', { query: 'li wei' });
    expect(got.ok).toBe(true);
    expect(got.contacts.map((c: any) => c.contact_id)).toEqual(['c_0001', 'c_0002']);
    expect(got.contacts[0]).toEqual({
      contact_id: 'c_0001',
      display_name: 'Li Wei',
      account: 'li.wei',
      department: 'Finance',
      title: 'Senior Accountant',
      source: 'bridge',
      confidence: 1,
      raw_ref: 'sim:contact:c_0001',
    });
    expect(got.next_cursor).toBeNull();
    expect(got.audit).toMatchObject({ tool: 'isphere_search_contacts', source: 'bridge', dry_run: false, result: 'ok', approval_id: null, operator_id: null, fallbacks: [], replayed: false });
    expect(got.audit.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.audit.started_at).toMatch(RFC3339);
    expect(Date.parse(got.audit.finished_at)).toBeGreaterThanOrEqual(Date.parse(got.audit.started_at));
  });

  it('lists inactive contacts only when asked', async () => {
    expect((await agent.ok('isphere_search_contacts', { query: 'Zhang Wei' })).contacts.map((c: any) => c.contact_id)).toEqual(['c_0004']);
    const all = await agent.ok('isphere_search_contacts', { query: 'Zhang Wei', include_inactive: true });
    expect(all.contacts.map((c: any) => c.contact_id).sort()).toEqual(['c_0004', 'c_0005']);
  });

  it('pages through exactly the contacts the policy lets it read, each once, filling pages past the hidden ones', async () => {
    const upstream = (await sim.bridge('/v1/contacts?query=a&include_inactive=true&limit=200')).items.map((c: any) => c.contact_id);
    const expected = upstream.filter(readableContact);
    // The policy hides some of what the bridge would list, so this is a real test of filling.
    expect(expected.length).toBeLessThan(upstream.length);
    const { items, pages } = await allPages(agent, 'isphere_search_contacts', { query: 'a', include_inactive: true, limit: 3 }, 'contacts');
    expect(items.map((c) => c.contact_id)).toEqual(expected);
    expect(pages.slice(0, -1).every((p) => p.contacts.length === 3)).toBe(true);
    expect(pages.at(-1).next_cursor).toBeNull();
  });

  it('refuses a cursor of another query, naming the field, and blank or over-long input', async () => {
    const first = await agent.ok('isphere_search_contacts', { query: 'a', limit: 2 });
    const foreign = await agent.call('isphere_search_contacts', { query: 'e', cursor: first.next_cursor });
    expect(foreign.error).toMatchObject({ code: 'INVALID_ARGUMENT', retryable: false, details: { field: 'cursor' } });
    expect(foreign.data.audit).toMatchObject({ tool: 'isphere_search_contacts', result: 'error' });

    const blank = await agent.fail('isphere_search_contacts', { query: '   ' });
    expect(blank).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'query' } });
    const tooMany = await agent.call('isphere_search_contacts', { query: 'a', limit: 101 });
    expect(tooMany.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'limit' } });
    // Refused before any source: the audit says none answered.
    expect(tooMany.data.audit).toMatchObject({ source: null, result: 'error', dry_run: false });
    expect(await agent.fail('isphere_search_contacts', { query: 'a', dry_run: true })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'dry_run' } });
  });

  it('hides contacts the policy does not grant', async () => {
    // 王芳 (c_0006, 财务部) exists on the bridge but is not readable under the test policy.
    expect((await sim.bridge('/v1/contacts?query=%E8%B4%A2%E5%8A%A1%E9%83%A8')).items.map((c: any) => c.contact_id)).toEqual(['c_0006']);
    expect((await agent.ok('isphere_search_contacts', { query: '财务部' })).contacts).toEqual([]);
  });
});

describe('isphere_search_groups', () => {
  it('finds groups by name and leaves archived ones out unless asked', async () => {
    const got = await agent.ok('isphere_search_groups', { query: 'Finance Team' });
    expect(got.groups).toEqual([
      expect.objectContaining({ group_id: 'g_0001', display_name: 'Finance Team', member_count: 5, confidence: 1, source: 'bridge' }),
      expect.objectContaining({ group_id: 'g_0002', display_name: 'Finance Team (Shanghai)', confidence: 0.9 }),
    ]);
    expect((await agent.ok('isphere_search_groups', { query: 'office move' })).groups).toEqual([]);
    expect((await agent.ok('isphere_search_groups', { query: 'office move', include_archived: true })).groups.map((g: any) => g.group_id)).toEqual(['g_0007']);
  });

  it('lists only readable groups', async () => {
    const upstream = (await sim.bridge('/v1/groups?query=o&include_archived=true')).items.map((g: any) => g.group_id);
    const got = await allPages(agent, 'isphere_search_groups', { query: 'o', include_archived: true, limit: 1 }, 'groups');
    expect(got.items.map((g) => g.group_id)).toEqual(upstream.filter(readableGroup));
    expect(upstream.filter((g: string) => !readableGroup(g)).length).toBeGreaterThan(0);
  });
});
