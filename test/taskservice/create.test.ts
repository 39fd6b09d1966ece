import { Harness, titles, type Agent } from './harness';

describe('task service: task_create', () => {
  let h: Harness;
  let me: Agent;
  let hiddenScope: string;
  let foreignScope: string;
  let deletedScope: string;
  let parentScope: string;
  const board = 'run_create';

  beforeAll(async () => {
    h = await new Harness().start();
    me = await h.agent('ag_me', [board, 'tm_create']);
    const stranger = await h.agent('ag_stranger', ['run_hidden']);
    const [hidden] = await stranger.create({ channel: 'run_hidden', tasks: titles('not yours') });
    hiddenScope = (await stranger.get('run_hidden', hidden)).task.scopeId;
    const abroad = await h.agent('ag_me', [board], 'elsewhere');
    const [foreign] = await abroad.create({ channel: board, tasks: titles('other workspace') });
    foreignScope = (await abroad.get(board, foreign)).task.scopeId;
    const [gone, parent] = await me.create({ channel: board, tasks: titles('to be deleted', 'parent') });
    deletedScope = (await me.get(board, gone)).task.scopeId;
    parentScope = (await me.get(board, parent)).task.scopeId;
    expect((await me.post('delete', { channel: board, number: gone })).status).toBe(200);
  });
  afterAll(() => h.stop());

  it('creates one rich task with every field, its thread taken from target', async () => {
    const rich = {
      title: '  Write the report  ',
      description: 'All of it',
      status: 'in_progress',
      priority: 'high',
      assignee: 'ag_someone',
      labels: ['docs'],
      checklist: [{ text: 'outline', done: true }, { text: 'draft' }],
      urls: ['https://example.com/a'],
      workspaces: ['/srv/report'],
      attachments: [{ name: 'a.pdf', url: 'https://example.com/a.pdf', sizeBytes: 10, mediaType: 'application/pdf' }],
      blocker: 'waiting on data',
    };
    const reply = await me.post('', { channel: board, tasks: [rich], target: `#${board}:thr_1` });
    expect(reply.status).toBe(201);
    expect(reply.body.reused).toBe(false);
    const [created] = reply.body.tasks;
    expect(created).toEqual({ scopeId: expect.stringMatching(/^tsk_/), channel: board, number: expect.any(Number), title: 'Write the report', parentNumber: null });
    const { task } = await me.get(board, created.number);
    expect(task).toMatchObject({
      ...rich,
      title: 'Write the report',
      checklist: [{ text: 'outline', done: true }, { text: 'draft', done: false }],
      creator: 'ag_me',
      messages: [],
      thread: `#${board}:thr_1`,
      parentNumber: null,
      subtaskCount: 0,
    });
    expect(task.createdAt).toEqual(task.updatedAt);
  });

  it('creates a title batch with consecutive numbers and defaults', async () => {
    const numbers = await me.create({ channel: 'tm_create', tasks: titles('a', 'b', 'c') });
    expect(numbers).toEqual([1, 2, 3]);
    const { task } = await me.get('tm_create', 2);
    expect(task).toMatchObject({ title: 'b', description: '', status: 'todo', priority: 'normal', assignee: null, blocker: null, thread: null });
  });

  it('creates subtasks by parent number or by parentTaskScope, numbered from the same board counter', async () => {
    const [top] = await me.create({ channel: board, tasks: titles('top') });
    const byNumber = await me.post('', { channel: board, parent: top, tasks: titles('child one') });
    expect(byNumber.status).toBe(201);
    expect(byNumber.body.tasks[0]).toMatchObject({ number: top + 1, parentNumber: top, channel: board });
    const scopeId = (await me.get(board, top)).task.scopeId;
    const byScope = await me.post('', { parentTaskScope: { kind: 'task', scopeId }, tasks: titles('child two', 'child three'), target: `#${board}` });
    expect(byScope.status).toBe(201);
    expect(byScope.body.tasks.map((t: any) => [t.number, t.parentNumber, t.channel])).toEqual([
      [top + 2, top, board],
      [top + 3, top, board],
    ]);
    const detail = await me.get(board, top);
    expect(detail.subtaskCount).toBe(3);
    expect(detail.task.subtaskCount).toBe(3);
    expect(detail.subtasks.map((s: any) => s.title)).toEqual(['child one', 'child two', 'child three']);
  });

  describe('refusals change nothing', () => {
    let nextBefore: number;
    let seqBefore: number;
    beforeAll(async () => {
      const [n] = await me.create({ channel: board, tasks: titles('marker') });
      nextBefore = n + 1;
      const events = (await h.events()).body.events;
      seqBefore = events[events.length - 1].seq;
    });

    const cases: { name: string; body: () => Record<string, unknown>; status: number; code: string; field?: string }[] = [
      { name: 'channel and parentTaskScope', body: () => ({ channel: board, parentTaskScope: { kind: 'task', scopeId: parentScope }, tasks: titles('x') }), status: 400, code: 'invalid_locator' },
      { name: 'parent and parentTaskScope', body: () => ({ parent: 2, parentTaskScope: { kind: 'task', scopeId: parentScope }, tasks: titles('x') }), status: 400, code: 'invalid_locator' },
      { name: 'no locator', body: () => ({ tasks: titles('x') }), status: 400, code: 'invalid_locator' },
      { name: 'parent without channel', body: () => ({ parent: 2, tasks: titles('x') }), status: 400, code: 'invalid_locator' },
      { name: 'parent 0', body: () => ({ channel: board, parent: 0, tasks: titles('x') }), status: 400, code: 'invalid_parent', field: 'parent' },
      { name: 'parent -3', body: () => ({ channel: board, parent: -3, tasks: titles('x') }), status: 400, code: 'invalid_parent', field: 'parent' },
      { name: 'parent 1.5', body: () => ({ channel: board, parent: 1.5, tasks: titles('x') }), status: 400, code: 'invalid_parent', field: 'parent' },
      { name: 'a parent number never used', body: () => ({ channel: board, parent: 9999, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: 'a deleted parent number', body: () => ({ channel: board, parent: 1, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: 'a scope that is not a task', body: () => ({ parentTaskScope: { kind: 'channel', scopeId: parentScope }, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: 'an unknown scope', body: () => ({ parentTaskScope: { kind: 'task', scopeId: 'tsk_unknown' }, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: 'the scope of a deleted task', body: () => ({ parentTaskScope: { kind: 'task', scopeId: deletedScope }, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: "another workspace's scope", body: () => ({ parentTaskScope: { kind: 'task', scopeId: foreignScope }, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: 'a scope on a board the agent is not on', body: () => ({ parentTaskScope: { kind: 'task', scopeId: hiddenScope }, tasks: titles('x') }), status: 404, code: 'parent_not_found' },
      { name: 'a board the agent is not on', body: () => ({ channel: 'run_hidden', tasks: titles('x') }), status: 404, code: 'channel_not_found' },
      { name: 'a batch with a second field', body: () => ({ channel: board, tasks: [{ title: 'a' }, { title: 'b', description: 'no' }] }), status: 400, code: 'batch_fields', field: 'tasks[1].description' },
      { name: 'a target on another board', body: () => ({ channel: board, tasks: titles('x'), target: '#tm_create:t1' }), status: 400, code: 'target_conflict', field: 'target' },
      { name: "a target off the scope's board", body: () => ({ parentTaskScope: { kind: 'task', scopeId: parentScope }, tasks: titles('x'), target: '#tm_create' }), status: 400, code: 'target_conflict', field: 'target' },
      { name: 'a malformed target', body: () => ({ channel: board, tasks: titles('x'), target: 'run_create' }), status: 400, code: 'invalid_input', field: 'target' },
      { name: 'no tasks', body: () => ({ channel: board, tasks: [] }), status: 400, code: 'invalid_input', field: 'tasks' },
      { name: '51 tasks', body: () => ({ channel: board, tasks: titles(...Array.from({ length: 51 }, (_, i) => `t${i}`)) }), status: 400, code: 'invalid_input', field: 'tasks' },
      { name: 'a blank title', body: () => ({ channel: board, tasks: titles('   ') }), status: 400, code: 'invalid_input', field: 'tasks[0].title' },
      { name: 'an unknown status', body: () => ({ channel: board, tasks: [{ title: 'x', status: 'doing' }] }), status: 400, code: 'invalid_input', field: 'tasks[0].status' },
      { name: 'an unknown task field', body: () => ({ channel: board, tasks: [{ title: 'x', colour: 'red' }] }), status: 400, code: 'invalid_input', field: 'tasks[0].colour' },
      { name: 'an unknown body field', body: () => ({ channel: board, tasks: titles('x'), mode: 'assign' }), status: 400, code: 'invalid_input', field: 'mode' },
      { name: 'messages, which create does not take', body: () => ({ channel: board, tasks: [{ title: 'x', messages: ['m'] }] }), status: 400, code: 'invalid_input', field: 'tasks[0].messages' },
      { name: 'an idempotencyKey without runId', body: () => ({ channel: board, tasks: titles('x'), idempotencyKey: 'k' }), status: 400, code: 'invalid_input', field: 'runId' },
      { name: 'a blank idempotencyKey', body: () => ({ channel: board, tasks: titles('x'), idempotencyKey: '   ', runId: 'run_1' }), status: 400, code: 'invalid_input', field: 'idempotencyKey' },
      { name: 'an idempotencyKey over 128 bytes', body: () => ({ channel: board, tasks: titles('x'), idempotencyKey: 'é'.repeat(65), runId: 'run_1' }), status: 400, code: 'invalid_input', field: 'idempotencyKey' },
    ];

    it.each(cases)('refuses $name: $status $code', async ({ body, status, code, field }) => {
      const reply = await me.post('', body());
      expect(reply.status).toBe(status);
      expect(reply.body.error.code).toBe(code);
      if (field) expect(reply.body.error.field).toBe(field);
    });

    it('consumed no number and appended no event', async () => {
      expect((await h.events(seqBefore)).body.events).toEqual([]);
      expect(await me.create({ channel: board, tasks: titles('after the refusals') })).toEqual([nextBefore]);
    });
  });

  it('accepts an idempotencyKey of exactly 128 bytes', async () => {
    const reply = await me.post('', { channel: board, tasks: titles('x'), idempotencyKey: 'é'.repeat(64), runId: 'run_bytes' });
    expect(reply.status).toBe(201);
  });

  describe('idempotent create', () => {
    const payload = { channel: board, tasks: titles('once', 'only once'), target: `#${board}:t9`, runId: 'run_idem' };

    it('replays the first answer with reused: true, allocating nothing and appending no event', async () => {
      const first = await me.post('', { ...payload, idempotencyKey: 'key-1' });
      expect(first.status).toBe(201);
      const seq = (await h.events()).body.events.at(-1).seq;
      const again = await me.post('', { ...payload, idempotencyKey: '  key-1 ' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ tasks: first.body.tasks, reused: true });
      expect((await h.events(seq)).body.events).toEqual([]);
      const [next] = await me.create({ channel: board, tasks: titles('next') });
      expect(next).toBe(first.body.tasks[1].number + 1);
    });

    it.each([
      ['another title', { tasks: titles('once', 'twice') }],
      ['another target', { target: `#${board}:t10` }],
      ['no target', { target: undefined }],
      ['a parent', { parent: 2 }],
    ])('refuses the same key with %s: 409 idempotency_conflict', async (_name, change) => {
      const reply = await me.post('', { ...payload, ...change, idempotencyKey: 'key-1' });
      expect(reply.status).toBe(409);
      expect(reply.body.error.code).toBe('idempotency_conflict');
    });

    it('keys are per run and per agent', async () => {
      const otherRun = await me.post('', { ...payload, runId: 'run_other', idempotencyKey: 'key-1' });
      expect(otherRun.status).toBe(201);
      const peer = await h.agent('ag_peer', [board]);
      const otherAgent = await peer.post('', { ...payload, idempotencyKey: 'key-1' });
      expect(otherAgent.status).toBe(201);
      expect(otherAgent.body.tasks[0].number).not.toBe(otherRun.body.tasks[0].number);
    });

    it('replays even after the parent task was deleted since', async () => {
      const [parent] = await me.create({ channel: board, tasks: titles('short-lived parent') });
      const scopeId = (await me.get(board, parent)).task.scopeId;
      const body = { parentTaskScope: { kind: 'task', scopeId }, tasks: titles('kid'), runId: 'run_idem', idempotencyKey: 'key-kid' };
      const first = await me.post('', body);
      expect(first.status).toBe(201);
      expect((await me.post('delete', { channel: board, number: parent, subtaskMode: 'promote' })).status).toBe(200);
      const again = await me.post('', body);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ tasks: first.body.tasks, reused: true });
    });
  });

  it('appends one task.created event per task', async () => {
    const seq = (await h.events()).body.events.at(-1).seq;
    const numbers = await me.create({ channel: 'tm_create', tasks: titles('e1', 'e2') });
    const events = (await h.events(seq)).body.events;
    expect(events.map((e: any) => [e.type, e.channel, e.number, e.agent])).toEqual(numbers.map((n) => ['task.created', 'tm_create', n, 'ag_me']));
    expect(events[0].seq).toBeGreaterThan(seq);
  });
});
