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

describe('isphere_receive_messages', () => {
  it('reads a conversation newest first, every message labelled with its source, and keeps since inclusive', async () => {
    const all = await allPages(agent, 'isphere_receive_messages', { conversation_id: 'conv_d_0001', limit: 7 }, 'messages');
    const upstream = (await sim.bridge('/v1/conversations/conv_d_0001/messages?limit=200')).items.map((m: any) => m.message_id);
    expect(all.items.map((m) => m.message_id)).toEqual(upstream);
    expect(all.pages[0].conversation).toEqual({ conversation_id: 'conv_d_0001', conversation_type: 'direct', display_name: 'Li Wei' });
    const times = all.items.map((m) => Date.parse(m.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.items.every((m) => m.source === 'bridge' && m.raw_ref.startsWith('sim:message:'))).toBe(true);

    const boundary = all.items[4];
    const since = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', since: boundary.created_at, limit: 200 });
    expect(since.messages.map((m: any) => m.message_id)).toEqual(all.items.filter((m) => m.created_at >= boundary.created_at).map((m) => m.message_id));
    expect(since.messages.at(-1).message_id).toBe(boundary.message_id);
    // The same instant in another offset is the same boundary.
    const shifted = new Date(Date.parse(boundary.created_at)).toISOString().replace('Z', '+00:00');
    expect((await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0001', since: shifted, limit: 200 })).messages).toHaveLength(since.messages.length);
  });

  it('finds a conversation by its name, refuses a name that matches several with the candidates, and answers a plan on dry_run', async () => {
    // "Finance Team (Shanghai)" contains the name too; the exact name wins.
    const byName = await agent.ok('isphere_receive_messages', { query: 'finance team', limit: 1 });
    expect(byName.conversation.conversation_id).toBe('conv_g_0001');
    expect(byName.audit.target_ref).toBe('conv_g_0001');
    // Lunch Club (g_0008) is not readable: not found by name, as if it were not there.
    expect((await agent.fail('isphere_receive_messages', { query: 'Lunch Club' })).code).toBe('TARGET_NOT_FOUND');

    const two = await agent.call('isphere_receive_messages', { query: 'Li Wei' });
    expect(two.error).toMatchObject({ code: 'AMBIGUOUS_TARGET', details: { field: 'query' } });
    expect(two.error!.details).toMatchObject({
      candidates: [
        { conversation_id: 'conv_d_0001', conversation_type: 'direct', display_name: 'Li Wei' },
        { conversation_id: 'conv_d_0002', conversation_type: 'direct', display_name: 'Li Wei' },
      ],
    });

    const plan = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_g_0001', since: '2026-06-20T08:00:00+08:00', dry_run: true });
    expect(plan).toMatchObject({ messages: [], next_cursor: null, plan: { source: 'bridge', conversation_id: 'conv_g_0001', since: '2026-06-20T00:00:00.000Z', limit: 50, keyword: null } });
    expect(plan.audit.dry_run).toBe(true);
  });

  it('keeps only messages containing the query when a conversation is named, and leaves attachments out when asked', async () => {
    const upstream = (await sim.bridge('/v1/conversations/conv_g_0003/messages?limit=200')).items;
    const withFiles = upstream.filter((m: any) => m.attachments.length > 0);
    expect(withFiles.length).toBeGreaterThan(0);
    const word = upstream[0].content_text.split(/\s+/)[0].toLowerCase();
    const got = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_g_0003', query: word, limit: 200 });
    expect(got.messages.length).toBeGreaterThan(0);
    expect(got.messages.every((m: any) => m.content_text.toLowerCase().includes(word) || (m.sender_name ?? '').toLowerCase().includes(word))).toBe(true);

    const full = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_g_0003', limit: 200 });
    const attached = full.messages.find((m: any) => m.message_id === withFiles[0].message_id);
    expect(attached.attachments[0]).toEqual({ file_id: withFiles[0].attachments[0].file_id, file_name: withFiles[0].attachments[0].file_name, size_bytes: withFiles[0].attachments[0].size_bytes, download_ref: `bridge/${withFiles[0].attachments[0].file_id}` });
    const bare = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_g_0003', limit: 200, include_attachment_metadata: false });
    expect(bare.messages.every((m: any) => m.attachments.length === 0)).toBe(true);
  });

  it('refuses a conversation the policy does not grant, one that is not there, and a call naming none', async () => {
    // conv_d_0004 is with Zhang Wei (c_0005): readable; conv_d_0005 with 王芳 (c_0006): not.
    expect((await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0004', limit: 1 })).conversation.display_name).toBe('Zhang Wei');
    const denied = await agent.call('isphere_receive_messages', { conversation_id: 'conv_d_0005' });
    expect(denied.error).toMatchObject({ code: 'PERMISSION_DENIED', retryable: false, details: { reason: 'access_policy' } });
    // The bridge answered (the conversation is there); the policy refused what it said.
    expect(denied.data.audit).toMatchObject({ source: 'bridge', target_ref: null, result: 'error' });
    expect((await agent.fail('isphere_receive_messages', { conversation_id: 'conv_nope' })).code).toBe('TARGET_NOT_FOUND');
    expect(await agent.fail('isphere_receive_messages', { limit: 3 })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'conversation_id' } });
    expect(await agent.fail('isphere_receive_messages', { conversation_id: 'conv_d_0001', conversation_type: 'group' })).toMatchObject({ code: 'TARGET_NOT_FOUND', details: { field: 'conversation_type' } });
    expect(await agent.fail('isphere_receive_messages', { conversation_id: 'conv_d_0001', since: 'yesterday' })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'since' } });
  });

  it('cuts long texts and shortens a page to the result budget with a marker, and the cursor continues where it stopped', async () => {
    const long = 'Quarterly numbers follow. '.repeat(1200);
    const { message_ids } = await sim.control('POST', '/messages', { conversation_id: 'conv_d_0003', content_text: long, count: 12, created_at: '2026-08-01T00:00:00Z' });
    const first = await agent.ok('isphere_receive_messages', { conversation_id: 'conv_d_0003', limit: 12 });
    expect(Buffer.byteLength(JSON.stringify(first))).toBeLessThanOrEqual(32 * 1024);
    expect(first.truncated).toMatchObject({ reason: 'result_budget', budget_bytes: 32 * 1024 });
    expect(first.truncated.items_omitted).toBeGreaterThan(0);
    expect(first.messages.length + first.truncated.items_omitted).toBe(12);
    expect(first.truncated.fields_cut).toEqual(first.messages.map((_m: any, i: number) => `messages[${i}].content_text`));
    expect(first.messages[0].content_text).toMatch(/ … \[cut: \d+ more characters\]$/);
    expect(Array.from(first.messages[0].content_text.replace(/ … \[cut: \d+ more characters\]$/, ''))).toHaveLength(4000);

    const rest = await allPages(agent, 'isphere_receive_messages', { conversation_id: 'conv_d_0003', limit: 12, cursor: first.next_cursor }, 'messages');
    const seen = [...first.messages, ...rest.items].map((m) => m.message_id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 12).sort()).toEqual([...message_ids].sort());
  });
});

describe('isphere_receive_files', () => {
  it('lists a conversation\'s files, and only files of readable conversations when none is named', async () => {
    const upstream = (await sim.bridge('/v1/files?conversation_id=conv_g_0001')).items;
    expect(upstream.length).toBeGreaterThan(0);
    const got = await agent.ok('isphere_receive_files', { conversation_id: 'conv_g_0001' });
    expect(got.mode).toBe('list');
    expect(got.files.map((f: any) => f.file_id)).toEqual(upstream.map((f: any) => f.file_id));
    expect(got.files[0]).toMatchObject({ conversation_id: 'conv_g_0001', saved_path: null, source: 'bridge', download_ref: `bridge/${upstream[0].file_id}`, sha256: upstream[0].sha256 });

    const everything = (await sim.bridge('/v1/files?limit=200')).items;
    const listed = await allPages(agent, 'isphere_receive_files', { limit: 4 }, 'files');
    const readableConversations = new Set(['conv_d_0001', 'conv_d_0002', 'conv_d_0003', 'conv_d_0004', 'conv_d_0006', 'conv_d_0007', 'conv_d_0008', 'conv_d_0009', 'conv_d_0010', 'conv_g_0001', 'conv_g_0002', 'conv_g_0003', 'conv_g_0007', 'conv_s_0001']);
    expect(listed.items.map((f) => f.file_id)).toEqual(everything.filter((f: any) => readableConversations.has(f.conversation_id)).map((f: any) => f.file_id));
    expect(everything.length).toBeGreaterThan(listed.items.length);
  });

  it('plans a download with the paths Dipper would write, refuses a real one outside the approved folders, and refuses bad paths and mixed modes', async () => {
    const [f] = (await sim.bridge('/v1/files?conversation_id=conv_g_0001')).items;
    const plan = await agent.ok('isphere_receive_files', { mode: 'download', file_id: f.file_id, message_id: f.message_id, output_dir: '/tmp/dl' });
    expect(plan.files).toEqual([expect.objectContaining({ file_id: f.file_id, saved_path: expect.stringMatching(new RegExp(`^/tmp/dl/${f.file_id}-`)) })]);
    expect(plan.audit.dry_run).toBe(true);
    expect(await agent.fail('isphere_receive_files', { mode: 'download', file_id: f.file_id, message_id: f.message_id, output_dir: '/tmp/dl', dry_run: false })).toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { reason: 'outside_approved_dir', field: 'output_dir' },
    });
    for (const output_dir of ['relative/dir', '/tmp/../etc']) {
      expect(await agent.fail('isphere_receive_files', { mode: 'download', file_id: f.file_id, message_id: f.message_id, output_dir })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'output_dir' } });
    }
    expect(await agent.fail('isphere_receive_files', { file_id: f.file_id })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file_id' } });
    expect(await agent.fail('isphere_receive_files', { mode: 'download', output_dir: '/tmp/dl' })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file_id' } });
  });

  it('refuses the files of a conversation or message the policy does not grant', async () => {
    const hidden = (await sim.bridge('/v1/files?conversation_id=conv_g_0005')).items;
    expect(hidden.length).toBeGreaterThan(0);
    expect((await agent.fail('isphere_receive_files', { conversation_id: 'conv_g_0005' })).code).toBe('PERMISSION_DENIED');
    expect((await agent.fail('isphere_receive_files', { message_id: hidden[0].message_id })).code).toBe('PERMISSION_DENIED');
    expect((await agent.fail('isphere_receive_files', { conversation_id: 'conv_nope' })).code).toBe('TARGET_NOT_FOUND');
  });
});
