import { Harness, titles, type Agent } from './harness';

describe('task service: task_get and task_update', () => {
  let h: Harness;
  let me: Agent;
  const board = 'run_update';

  beforeAll(async () => {
    h = await new Harness().start();
    me = await h.agent('ag_me', [board]);
  });
  afterAll(() => h.stop());

  describe('task_get', () => {
    it('returns the task, its first 20 subtasks and its last 10 checkpoints, with counts', async () => {
      const [parent] = await me.create({ channel: board, tasks: titles('big parent') });
      await me.create({ channel: board, parent, tasks: titles(...Array.from({ length: 25 }, (_, i) => `kid ${i + 1}`)) });
      for (let i = 1; i <= 12; i++) {
        expect((await me.post('add-checkpoint', { channel: board, number: parent, summary: `step ${i}` })).status).toBe(201);
      }
      const detail = await me.get(board, parent);
      expect(detail.task).toMatchObject({ number: parent, title: 'big parent', subtaskCount: 25 });
      expect(detail.subtaskCount).toBe(25);
      expect(detail.subtasks).toHaveLength(20);
      expect(detail.subtasks[0]).toEqual({
        scopeId: expect.stringMatching(/^tsk_/),
        number: parent + 1,
        title: 'kid 1',
        status: 'todo',
        priority: 'normal',
        assignee: null,
        updatedAt: expect.any(String),
        subtaskCount: 0,
      });
      expect(detail.checkpointCount).toBe(12);
      expect(detail.checkpoints.map((c: any) => c.summary)).toEqual(Array.from({ length: 10 }, (_, i) => `step ${i + 3}`));
      expect(detail.checkpoints[0]).toEqual({ id: expect.stringMatching(/^ckp_/), summary: 'step 3', author: 'ag_me', createdAt: expect.any(String) });
    });

    it('is 404 task_not_found for a number never used and 410 task_deleted for a deleted task', async () => {
      const missing = await me.post('get', { channel: board, number: 99999 });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('task_not_found');
      const [n] = await me.create({ channel: board, tasks: titles('short-lived') });
      await me.post('delete', { channel: board, number: n });
      const gone = await me.post('get', { channel: board, number: n });
      expect(gone.status).toBe(410);
      expect(gone.body.error).toMatchObject({ code: 'task_deleted', details: { number: n, deletedBy: 'ag_me', deletedAt: expect.any(String) } });
    });

    it.each([
      [{ channel: board, number: 0 }, 'number'],
      [{ channel: board, number: '1' }, 'number'],
      [{ number: 1 }, 'channel'],
    ])('refuses %j (invalid_input)', async (body, field) => {
      const reply = await me.post('get', body);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 'invalid_input', field });
    });
  });

  describe('task_update', () => {
    it('replaces the fields given, null clears, and updatedAt grows', async () => {
      const [n] = await me.create({ channel: board, tasks: [{ title: 'draft', assignee: 'ag_x', blocker: 'b' }] });
      const before = (await me.get(board, n)).task;
      const seq = (await h.events()).body.events.at(-1).seq;
      const reply = await me.post('update', {
        channel: board,
        number: n,
        title: 'final',
        description: 'now with text',
        status: 'in_review',
        priority: 'urgent',
        assignee: null,
        labels: ['x', 'y'],
        checklist: [{ text: 'check', done: true }],
        urls: ['https://example.com'],
        messages: ['msg_1'],
        workspaces: ['/w'],
        attachments: [{ name: 'n', url: 'https://example.com/n' }],
        blocker: null,
        thread: `#${board}:t7`,
      });
      expect(reply.status).toBe(200);
      expect(reply.body.task).toMatchObject({
        title: 'final',
        description: 'now with text',
        status: 'in_review',
        priority: 'urgent',
        assignee: null,
        labels: ['x', 'y'],
        checklist: [{ text: 'check', done: true }],
        urls: ['https://example.com'],
        messages: ['msg_1'],
        workspaces: ['/w'],
        attachments: [{ name: 'n', url: 'https://example.com/n' }],
        blocker: null,
        thread: `#${board}:t7`,
        createdAt: before.createdAt,
      });
      expect(Date.parse(reply.body.task.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
      expect((await me.list({ channel: board, query: 'text' })).body.items.map((t: any) => t.number)).toEqual([n]);
      const cleared = await me.post('update', { channel: board, number: n, thread: null });
      expect(cleared.body.task.thread).toBeNull();
      expect((await h.events(seq)).body.events.map((e: any) => [e.type, e.number])).toEqual([
        ['task.updated', n],
        ['task.updated', n],
      ]);
    });

    it('updatedAt strictly increases even when the clock stands still', async () => {
      const [n] = await me.create({ channel: board, tasks: titles('frozen') });
      h.frozenAt = Date.now() + 60_000;
      try {
        const stamps: number[] = [];
        for (const title of ['a', 'b', 'c']) stamps.push(Date.parse((await me.post('update', { channel: board, number: n, title })).body.task.updatedAt));
        expect((await me.post('set-claim', { channel: board, numbers: [n], claimed: true })).body.changed).toBe(1);
        stamps.push(Date.parse((await me.get(board, n)).task.updatedAt));
        const checkpoint = await me.post('add-checkpoint', { channel: board, number: n, summary: 'still' });
        stamps.push(Date.parse(checkpoint.body.taskUpdatedAt));
        const f = h.frozenAt;
        expect(stamps).toEqual([f, f + 1, f + 2, f + 3, f + 4]);
      } finally {
        h.frozenAt = null;
      }
    });

    it.each([
      ['no field', {}],
      ['only expectedUpdatedAt', { expectedUpdatedAt: '2026-01-01T00:00:00.000Z' }],
    ])('refuses an update with %s: 400 empty_update', async (_name, extra) => {
      const reply = await me.post('update', { channel: board, number: 1, ...extra });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('empty_update');
    });

    it('refuses a stale expectedUpdatedAt with the current one, and takes a current one', async () => {
      const [n] = await me.create({ channel: board, tasks: titles('contended') });
      const read = (await me.get(board, n)).task.updatedAt;
      const first = await me.post('update', { channel: board, number: n, status: 'in_progress', expectedUpdatedAt: read });
      expect(first.status).toBe(200);
      const stale = await me.post('update', { channel: board, number: n, status: 'done', expectedUpdatedAt: read });
      expect(stale.status).toBe(409);
      expect(stale.body.error).toMatchObject({ code: 'stale_update', details: { updatedAt: first.body.task.updatedAt } });
      expect((await me.get(board, n)).task.status).toBe('in_progress');
    });

    it('re-parents on the same board, makes top-level with null, and refuses cycles', async () => {
      const [a, b] = await me.create({ channel: board, tasks: titles('a', 'b') });
      const [child] = await me.create({ channel: board, parent: a, tasks: titles('child') });
      const [grandchild] = await me.create({ channel: board, parent: child, tasks: titles('grandchild') });
      const moved = await me.post('update', { channel: board, number: child, parent: b });
      expect(moved.body.task.parentNumber).toBe(b);
      expect((await me.get(board, a)).subtaskCount).toBe(0);
      expect((await me.get(board, b)).subtaskCount).toBe(1);
      for (const parent of [child, grandchild]) {
        const cycle = await me.post('update', { channel: board, number: child, parent });
        expect(cycle.status).toBe(400);
        expect(cycle.body.error).toMatchObject({ code: 'invalid_parent', field: 'parent' });
      }
      const top = await me.post('update', { channel: board, number: child, parent: null });
      expect(top.body.task.parentNumber).toBeNull();
      expect((await me.get(board, grandchild)).task.parentNumber).toBe(child);
    });

    it.each([
      { name: 'parent 0', change: { parent: 0 }, status: 400, code: 'invalid_parent' },
      { name: 'an unknown parent', change: { parent: 99999 }, status: 404, code: 'parent_not_found' },
      { name: 'a malformed thread', change: { thread: 'thread-7' }, status: 400, code: 'invalid_input', field: 'thread' },
      { name: 'a malformed expectedUpdatedAt', change: { title: 't', expectedUpdatedAt: 'yesterday' }, status: 400, code: 'invalid_input', field: 'expectedUpdatedAt' },
      { name: 'an unknown field', change: { reviewer: 'ag_x' }, status: 400, code: 'invalid_input', field: 'reviewer' },
      { name: 'a blank title', change: { title: ' ' }, status: 400, code: 'invalid_input', field: 'title' },
    ])('refuses $name: $status $code', async ({ change, status, code, field }) => {
      const [n] = await me.create({ channel: board, tasks: titles('target') });
      const reply = await me.post('update', { channel: board, number: n, ...change });
      expect(reply.status).toBe(status);
      expect(reply.body.error.code).toBe(code);
      if (field) expect(reply.body.error.field).toBe(field);
    });

    it('is 404 for a missing task and 410 for a deleted one', async () => {
      expect((await me.post('update', { channel: board, number: 99999, title: 'x' })).body.error.code).toBe('task_not_found');
      const [n] = await me.create({ channel: board, tasks: titles('gone') });
      await me.post('delete', { channel: board, number: n });
      const reply = await me.post('update', { channel: board, number: n, title: 'x' });
      expect(reply.status).toBe(410);
      expect(reply.body.error.code).toBe('task_deleted');
    });
  });
});
