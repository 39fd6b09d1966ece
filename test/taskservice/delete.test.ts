import { Harness, titles, type Agent } from './harness';

describe('task service: task_delete', () => {
  let h: Harness;
  let me: Agent;
  let peer: Agent;
  const board = 'run_delete';

  beforeAll(async () => {
    h = await new Harness().start();
    me = await h.agent('ag_me', [board]);
    peer = await h.agent('ag_peer', [board]);
  });
  afterAll(() => h.stop());

  const lastSeq = async () => (await h.events()).body.events.at(-1)?.seq ?? 0;
  const eventsSince = async (seq: number) => (await h.events(seq)).body.events.map((e: any) => [e.type, e.number]);
  const status = async (n: number) => (await me.post('get', { channel: board, number: n })).status;

  /** A parent, two children, and a grandchild under the first child. */
  async function family(childCreator: Agent = me) {
    const [parent] = await me.create({ channel: board, tasks: titles('parent') });
    const [c1, c2] = await me.create({ channel: board, parent, tasks: titles('c1', 'c2') });
    const [g] = await childCreator.create({ channel: board, parent: c1, tasks: titles('g') });
    return { parent, c1, c2, g };
  }

  it('deletes a leaf: tombstone (410), a task.deleted event, and its number is never reused', async () => {
    const [n] = await me.create({ channel: board, tasks: titles('leaf') });
    const seq = await lastSeq();
    const reply = await me.post('delete', { channel: board, number: n });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ deleted: [n], promoted: [] });
    expect(await status(n)).toBe(410);
    expect(await eventsSince(seq)).toEqual([['task.deleted', n]]);
    expect(await me.create({ channel: board, tasks: titles('next') })).toEqual([n + 1]);
    const again = await me.post('delete', { channel: board, number: n });
    expect(again.status).toBe(410);
    expect(again.body.error.code).toBe('task_deleted');
  });

  it('promote deletes the task and makes its direct children top-level', async () => {
    const { parent, c1, c2, g } = await family();
    const seq = await lastSeq();
    const reply = await me.post('delete', { channel: board, number: parent, subtaskMode: 'promote' });
    expect(reply.body).toEqual({ deleted: [parent], promoted: [c1, c2] });
    expect((await me.get(board, c1)).task.parentNumber).toBeNull();
    expect((await me.get(board, g)).task.parentNumber).toBe(c1);
    expect(await eventsSince(seq)).toEqual([
      ['task.updated', c1],
      ['task.updated', c2],
      ['task.deleted', parent],
    ]);
  });

  it('delete removes every descendant in one go', async () => {
    const { parent, c1, c2, g } = await family();
    const seq = await lastSeq();
    const reply = await me.post('delete', { channel: board, number: parent, subtaskMode: 'delete' });
    expect(reply.body).toEqual({ deleted: [parent, c1, c2, g], promoted: [] });
    for (const n of [parent, c1, c2, g]) expect(await status(n)).toBe(410);
    expect(await eventsSince(seq)).toEqual([parent, c1, c2, g].map((n) => ['task.deleted', n]));
  });

  it.each([
    { name: 'no subtaskMode on a parent', who: 'me', mode: undefined, childCreator: 'me', status: 409, code: 'subtask_mode_required' },
    { name: 'delete over a descendant of another creator', who: 'me', mode: 'delete', childCreator: 'peer', status: 409, code: 'mixed_creators' },
    { name: 'a caller who is not the creator', who: 'peer', mode: 'promote', childCreator: 'me', status: 403, code: 'not_creator' },
  ])('refuses $name ($status $code) and deletes nothing', async ({ who, mode, childCreator, status: httpStatus, code }) => {
    const { parent, c1, c2, g } = await family(childCreator === 'peer' ? peer : me);
    const seq = await lastSeq();
    const caller = who === 'peer' ? peer : me;
    const reply = await caller.post('delete', { channel: board, number: parent, ...(mode ? { subtaskMode: mode } : {}) });
    expect(reply.status).toBe(httpStatus);
    expect(reply.body.error.code).toBe(code);
    for (const n of [parent, c1, c2, g]) expect(await status(n)).toBe(200);
    expect(await eventsSince(seq)).toEqual([]);
  });

  it('mixed_creators names the subtasks of other creators; promote still works', async () => {
    const { parent, c1, c2, g } = await family(peer);
    const reply = await me.post('delete', { channel: board, number: parent, subtaskMode: 'delete' });
    expect(reply.body.error.details).toEqual({ numbers: [g] });
    expect((await me.post('delete', { channel: board, number: parent, subtaskMode: 'promote' })).body).toEqual({ deleted: [parent], promoted: [c1, c2] });
  });

  it('a task whose subtasks are all deleted is a leaf again', async () => {
    const [parent] = await me.create({ channel: board, tasks: titles('parent') });
    const [kid] = await me.create({ channel: board, parent, tasks: titles('kid') });
    await me.post('delete', { channel: board, number: kid });
    expect((await me.post('delete', { channel: board, number: parent })).body).toEqual({ deleted: [parent], promoted: [] });
  });

  it.each([
    ['a missing task', { number: 99999 }, 404, 'task_not_found'],
    ['an unknown subtaskMode', { number: 1, subtaskMode: 'orphan' }, 400, 'invalid_input'],
  ])('refuses %s', async (_name, body, httpStatus, code) => {
    const reply = await me.post('delete', { channel: board, ...body });
    expect(reply.status).toBe(httpStatus);
    expect(reply.body.error.code).toBe(code);
  });
});
