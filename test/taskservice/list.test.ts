import { Harness, titles, type Agent } from './harness';

describe('task service: task_list', () => {
  let h: Harness;
  let me: Agent;
  let peer: Agent;
  const browse = 'run_browse';
  const search = 'run_search';

  beforeAll(async () => {
    h = await new Harness().start();
    me = await h.agent('ag_me', [browse, search]);
    peer = await h.agent('ag_peer', [browse, search]);
    // 25 active top-level tasks (1-25), a done one (26), a cancelled one (27), and two subtasks of task 1 (28, 29).
    await me.create({ channel: browse, tasks: titles(...Array.from({ length: 25 }, (_, i) => `browse ${i + 1}`)) });
    await me.create({ channel: browse, tasks: [{ title: 'finished', status: 'done' }] });
    await me.create({ channel: browse, tasks: [{ title: 'dropped', status: 'cancelled' }] });
    await me.create({ channel: browse, parent: 1, tasks: titles('sub a', 'sub b') });

    await me.create({ channel: search, tasks: [{ title: 'Deploy the gateway', description: 'rolling restart' }] }); // 1
    await me.create({ channel: search, tasks: [{ title: 'Write notes', description: 'about the GATEWAY deploy' }] }); // 2
    await me.create({ channel: search, tasks: [{ title: 'Gateway metrics', status: 'done', priority: 'high' }] }); // 3
    await peer.create({ channel: search, tasks: [{ title: 'Deploy gateway docs', assignee: 'ag_me', priority: 'high' }] }); // 4
    await me.create({ channel: search, tasks: [{ title: 'Réviser l’ÉCOLE', description: 'discount 100% off' }] }); // 5
    await me.create({ channel: search, tasks: [{ title: 'discount 100x' }] }); // 6
    await me.create({ channel: search, parent: 1, tasks: [{ title: 'gateway subtask', assignee: 'ag_peer' }] }); // 7
  });
  afterAll(() => h.stop());

  const numbers = (reply: { body: any }) => reply.body.items.map((t: any) => t.number);

  it('browses active top-level tasks, most recently updated first, 20 to a page', async () => {
    const page = await me.list({ channel: browse });
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(20);
    // One batch shares createdAt/updatedAt, so the number breaks the tie, descending.
    expect(numbers(page)).toEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    expect(page.body.items[0]).toMatchObject({ channel: browse, number: 25, title: 'browse 25', status: 'todo', subtaskCount: 0 });
    expect(typeof page.body.nextCursor).toBe('string');
    const rest = await me.list({ channel: browse, cursor: page.body.nextCursor });
    expect(numbers(rest)).toEqual([5, 4, 3, 2, 1]);
    expect(rest.body.nextCursor).toBeUndefined();
    expect(rest.body.items[4].subtaskCount).toBe(2);
  });

  it('pages through every task with any limit and no repeats', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await me.list({ channel: browse, sort: 'number_asc', includeSubtasks: 'true', status: 'todo', limit: 7, ...(cursor ? { cursor } : {}) });
      expect(reply.status).toBe(200);
      seen.push(...numbers(reply));
      cursor = reply.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(seen).toEqual([...Array.from({ length: 25 }, (_, i) => i + 1), 28, 29]);
  });

  it('a page boundary is kept when a task is updated between pages (keyset, not offset)', async () => {
    const first = await me.list({ channel: browse, sort: 'created_asc', limit: 10 });
    expect(numbers(first)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    await me.create({ channel: browse, tasks: titles('late arrival') });
    const second = await me.list({ channel: browse, sort: 'created_asc', limit: 10, cursor: first.body.nextCursor });
    expect(numbers(second)).toEqual(Array.from({ length: 10 }, (_, i) => i + 11));
  });

  it.each([
    ['another status', { status: 'todo' }],
    ['another sort', { sort: 'number_asc' }],
    ['includeSubtasks', { includeSubtasks: 'true' }],
    ['a query', { query: 'browse' }],
    ['an assignee filter', { assignee: 'me' }],
    ['a priority filter', { priority: 'high' }],
    ['another board', { channel: search }],
  ])('refuses a cursor used with %s: 400 invalid_cursor', async (_name, change) => {
    const { nextCursor } = (await me.list({ channel: browse })).body;
    const reply = await me.list({ channel: browse, ...change, cursor: nextCursor });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_cursor');
  });

  it('a cursor survives a change of limit, and is refused to another agent', async () => {
    const { nextCursor } = (await me.list({ channel: browse })).body;
    expect((await me.list({ channel: browse, limit: 50, cursor: nextCursor })).status).toBe(200);
    expect((await peer.list({ channel: browse, cursor: nextCursor })).body.error.code).toBe('invalid_cursor');
  });

  it.each(['garbage', Buffer.from('{"k":"x"}').toString('base64url'), Buffer.from('[1,2]').toString('base64url')])(
    'refuses a cursor it never gave out (%s)',
    async (cursor) => {
      const reply = await me.list({ channel: browse, cursor });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('invalid_cursor');
    },
  );

  it.each([
    [1, 200],
    [100, 200],
    [0, 400],
    [101, 400],
    [-1, 400],
    ['1.5', 400],
    ['abc', 400],
  ])('limit %s is %i', async (limit, status) => {
    const reply = await me.list({ channel: browse, limit });
    expect(reply.status).toBe(status);
    if (status === 400) expect(reply.body.error).toMatchObject({ code: 'invalid_input', field: 'limit' });
    else expect(reply.body.items.length).toBe(Math.min(Number(limit), 26));
  });

  it.each([
    { name: 'active by default: neither done nor cancelled', params: {}, check: (items: any[]) => items.length >= 25 && items.every((t) => !['done', 'cancelled'].includes(t.status)) },
    { name: 'one status', params: { status: 'done' }, check: (items: any[]) => items.length === 1 && items[0].number === 26 },
    { name: 'cancelled', params: { status: 'cancelled' }, check: (items: any[]) => items.length === 1 && items[0].number === 27 },
  ])('status: $name', async ({ params, check }) => {
    const reply = await me.list({ channel: browse, limit: 100, ...params });
    expect(reply.status).toBe(200);
    expect(check(reply.body.items)).toBe(true);
  });

  it('status all is refused without a query, or with a blank one, and searches every status with one', async () => {
    for (const query of [undefined, '   ']) {
      const reply = await me.list({ channel: browse, status: 'all', ...(query !== undefined ? { query } : {}) });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('invalid_status');
    }
    const all = await me.list({ channel: search, status: 'all', query: 'gateway', sort: 'number_asc' });
    expect(numbers(all)).toEqual([1, 2, 3, 4]);
    const active = await me.list({ channel: search, query: 'gateway', sort: 'number_asc' });
    expect(numbers(active)).toEqual([1, 2, 4]);
  });

  it('includeSubtasks adds subtasks to browse and search', async () => {
    expect(numbers(await me.list({ channel: search, query: 'gateway', includeSubtasks: 'true', sort: 'number_asc' }))).toEqual([1, 2, 4, 7]);
    const browsed = await me.list({ channel: browse, status: 'todo', includeSubtasks: 'true', sort: 'number_asc', limit: 100 });
    expect(numbers(browsed)).toEqual(expect.arrayContaining([28, 29]));
    expect(browsed.body.items.find((t: any) => t.number === 29).parentNumber).toBe(1);
    expect(numbers(await me.list({ channel: browse, limit: 100 }))).not.toContain(28);
  });

  it('search needs every term, in title or description, whatever the case', async () => {
    expect(numbers(await me.list({ channel: search, query: 'DEPLOY   gateway', sort: 'number_asc' }))).toEqual([1, 2, 4]);
    expect(numbers(await me.list({ channel: search, query: 'deploy rolling' }))).toEqual([1]);
    expect(numbers(await me.list({ channel: search, query: 'école' }))).toEqual([5]);
    expect(numbers(await me.list({ channel: search, query: 'nothing-like-this' }))).toEqual([]);
  });

  it('search takes % and _ literally', async () => {
    expect(numbers(await me.list({ channel: search, query: '100%' }))).toEqual([5]);
    expect(numbers(await me.list({ channel: search, query: '%' }))).toEqual([5]);
    expect(numbers(await me.list({ channel: search, query: 'discount_' }))).toEqual([]);
  });

  it('relevance (the search default) puts title matches first, then numbers', async () => {
    // 2 has "gateway" and "deploy" only in its description; 1 and 4 in their titles.
    expect(numbers(await me.list({ channel: search, query: 'deploy gateway' }))).toEqual([1, 4, 2]);
    const paged = await me.list({ channel: search, query: 'deploy gateway', limit: 2 });
    expect(numbers(paged)).toEqual([1, 4]);
    expect(numbers(await me.list({ channel: search, query: 'deploy gateway', limit: 2, cursor: paged.body.nextCursor }))).toEqual([2]);
  });

  it.each([
    { name: 'assignee me', params: { assignee: 'me' }, expected: [4] },
    { name: 'assignee none', params: { assignee: 'none' }, expected: [1, 2, 5, 6] },
    { name: 'assignee by id', params: { assignee: 'ag_peer', includeSubtasks: 'true' }, expected: [7] },
    { name: 'creator me', params: { creator: 'me' }, expected: [1, 2, 5, 6] },
    { name: 'creator by id', params: { creator: 'ag_peer' }, expected: [4] },
    { name: 'priority', params: { priority: 'high' }, expected: [4] },
    { name: 'sort created_asc', params: { sort: 'created_asc' }, expected: [1, 2, 4, 5, 6] },
  ])('filters: $name', async ({ params, expected }) => {
    const sort = (params as any).sort ?? 'number_asc';
    expect(numbers(await me.list({ channel: search, sort, ...params }))).toEqual(expected);
  });

  it.each([
    ['relevance without a query', { sort: 'relevance' }, 'sort'],
    ['an unknown sort', { sort: 'random' }, 'sort'],
    ['an unknown status', { status: 'open' }, 'status'],
    ['includeSubtasks not true/false', { includeSubtasks: 'yes' }, 'includeSubtasks'],
    ['an unknown parameter', { colour: 'red' }, 'colour'],
  ])('refuses %s (invalid_input)', async (_name, params, field) => {
    const reply = await me.list({ channel: browse, ...params });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_input', field });
  });

  it('refuses a list without a channel, and of a board the agent is not on', async () => {
    const none = await h.request('GET', me.base, { token: me.token });
    expect(none.body.error).toMatchObject({ code: 'invalid_input', field: 'channel' });
    const stranger = await me.list({ channel: 'run_elsewhere' });
    expect(stranger.status).toBe(404);
    expect(stranger.body.error.details.channels).toEqual([browse, search]);
  });
});
