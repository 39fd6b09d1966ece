import { ids, Sim, withQuery } from './harness';

describe('isphere bridge simulator: contacts and groups', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('lists active contacts ordered by display name, then id, with every field of the protocol', async () => {
    const reply = await sim.get('/v1/contacts?limit=200');
    expect(reply.status).toBe(200);
    const items = reply.body.items;
    expect(items).toHaveLength(26);
    expect(items.every((c: any) => c.active)).toBe(true);
    const keys = items.map((c: any) => [c.display_name, c.contact_id]);
    expect(keys).toEqual([...keys].sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1)));
    expect(items.find((c: any) => c.contact_id === 'c_0001')).toEqual({
      contact_id: 'c_0001',
      display_name: 'Li Wei',
      account: 'li.wei',
      department: 'Finance',
      title: 'Senior Accountant',
      active: true,
      raw_ref: expect.any(String),
    });
    expect(reply.body.next_cursor).toBeNull();
  });

  it.each([
    { name: 'a shared display name', query: 'li wei', expected: ['c_0001', 'c_0002'] },
    { name: 'a department, in another case', query: 'FINANCE', expected: ['c_0001', 'c_0014', 'c_0024'] },
    { name: 'a Chinese department', query: '研发', expected: ['c_0007', 'c_0029'] },
    { name: 'a title', query: 'legal counsel', expected: ['c_0011'] },
    { name: 'an account', query: 'zhang.wei', expected: ['c_0004'] },
    { name: 'a Chinese name', query: '王芳', expected: ['c_0006'] },
    { name: 'an inactive contact only when asked', query: 'zhang.wei', inactive: 'true', expected: ['c_0004', 'c_0005'] },
    { name: 'nothing at all', query: 'nobody-by-that-name', expected: [] },
    { name: 'an empty query (all, with the inactive)', query: '', inactive: 'true', expected: 30 },
  ])('finds contacts by $name', async ({ query, inactive, expected }) => {
    const reply = await sim.get(withQuery('/v1/contacts', { query, include_inactive: inactive, limit: 200 }));
    expect(reply.status).toBe(200);
    if (typeof expected === 'number') expect(reply.body.items).toHaveLength(expected);
    else expect(ids(reply, 'contact_id').sort()).toEqual(expected);
  });

  it('shows the two Li Wei of the same spelling apart only by department and id', async () => {
    const reply = await sim.get('/v1/contacts?query=Li%20Wei');
    expect(reply.body.items.map((c: any) => [c.contact_id, c.department])).toEqual([
      ['c_0001', 'Finance'],
      ['c_0002', 'R&D'],
    ]);
  });

  it('lists groups but the archived one, by display name', async () => {
    const reply = await sim.get('/v1/groups');
    expect(reply.status).toBe(200);
    expect(ids(reply, 'display_name')).toEqual(['Finance Team', 'Finance Team (Shanghai)', 'Lunch Club', 'Project Phoenix', 'Project Phoenix Steering', 'R&D Backend', '全员通知']);
    expect(reply.body.items[0]).toEqual({ group_id: 'g_0001', display_name: 'Finance Team', member_count: 5, owner_ref: 'c_0014', archived: false, raw_ref: expect.any(String) });
  });

  it.each([
    { query: 'phoenix', archived: undefined, expected: ['g_0003', 'g_0004'] },
    { query: 'FINANCE team', archived: undefined, expected: ['g_0001', 'g_0002'] },
    { query: 'office', archived: undefined, expected: [] },
    { query: 'office', archived: 'true', expected: ['g_0007'] },
    { query: '全员', archived: 'false', expected: ['g_0006'] },
  ])('groups matching "$query" (include_archived=$archived) are $expected', async ({ query, archived, expected }) => {
    const reply = await sim.get(withQuery('/v1/groups', { query, include_archived: archived }));
    expect(ids(reply, 'group_id')).toEqual(expected);
  });

  it.each([
    ['/v1/contacts?limit=0', 'limit'],
    ['/v1/contacts?limit=201', 'limit'],
    ['/v1/contacts?limit=ten', 'limit'],
    ['/v1/contacts?limit=2.5', 'limit'],
    ['/v1/contacts?include_inactive=yes', 'include_inactive'],
    ['/v1/contacts?query=a&query=b', 'query'],
    ['/v1/contacts?q=li', 'q'],
    ['/v1/groups?include_inactive=true', 'include_inactive'],
    ['/v1/groups?include_archived=1', 'include_archived'],
  ])('%s is 400 invalid_argument naming %s', async (path, field) => {
    const reply = await sim.get(path);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_argument');
    expect(reply.body.error.message.startsWith(`${field}:`)).toBe(true);
  });

  it('takes parameters sent empty as not sent', async () => {
    const reply = await sim.get('/v1/contacts?query=&include_inactive=&limit=&cursor=');
    expect(reply.status).toBe(200);
    expect(reply.body.items).toHaveLength(26);
  });
});
