import { Harness, titles, type Agent } from './harness';

describe('task service: task_set_claim and task_checkpoint', () => {
  let h: Harness;
  let me: Agent;
  let peer: Agent;
  const board = 'run_claim';

  beforeAll(async () => {
    h = await new Harness().start();
    me = await h.agent('ag_me', [board]);
    peer = await h.agent('ag_peer', [board]);
  });
  afterAll(() => h.stop());

  const claim = (agent: Agent, numbers: number[], claimed: boolean) => agent.post('set-claim', { channel: board, numbers, claimed });

  it('claims for the caller, and a second claim changes nothing (not even updatedAt)', async () => {
    const [a, b] = await me.create({ channel: board, tasks: titles('a', 'b') });
    const seq = (await h.events()).body.events.at(-1).seq;
    expect((await claim(me, [a, b], true)).body).toEqual({ changed: 2, unchanged: 0, failures: [] });
    const stamp = (await me.get(board, a)).task.updatedAt;
    expect((await me.get(board, a)).task.assignee).toBe('ag_me');
    expect((await claim(me, [a, b], true)).body).toEqual({ changed: 0, unchanged: 2, failures: [] });
    expect((await me.get(board, a)).task.updatedAt).toBe(stamp);
    expect((await claim(me, [a], false)).body).toEqual({ changed: 1, unchanged: 0, failures: [] });
    expect((await me.get(board, a)).task.assignee).toBeNull();
    expect((await claim(me, [a], false)).body).toEqual({ changed: 0, unchanged: 1, failures: [] });
    expect((await h.events(seq)).body.events.map((e: any) => [e.type, e.number])).toEqual([
      ['task.claimed', a],
      ['task.claimed', b],
      ['task.released', a],
    ]);
  });

  it('reports each task that cannot reach the state, and changes the rest', async () => {
    const [free, mine, theirs, gone] = await me.create({ channel: board, tasks: titles('free', 'mine', 'theirs', 'gone') });
    await claim(me, [mine], true);
    await claim(peer, [theirs], true);
    await me.post('delete', { channel: board, number: gone });
    const reply = await claim(me, [free, mine, theirs, 99999, gone], true);
    expect(reply.status).toBe(200);
    expect(reply.body.changed).toBe(1);
    expect(reply.body.unchanged).toBe(1);
    expect(reply.body.failures.map((f: any) => [f.number, f.code])).toEqual([
      [theirs, 'claimed_by_other'],
      [99999, 'task_not_found'],
      [gone, 'task_deleted'],
    ]);
    expect(reply.body.failures.every((f: any) => typeof f.message === 'string' && f.message.length > 0)).toBe(true);
    const release = await claim(me, [theirs, free], false);
    expect(release.body).toMatchObject({ changed: 1, unchanged: 0, failures: [{ number: theirs, code: 'not_assignee' }] });
    expect((await me.get(board, theirs)).task.assignee).toBe('ag_peer');
  });

  it.each([
    ['duplicate numbers', { numbers: [1, 1], claimed: true }, 'numbers'],
    ['no numbers', { numbers: [], claimed: true }, 'numbers'],
    ['51 numbers', { numbers: Array.from({ length: 51 }, (_, i) => i + 1), claimed: true }, 'numbers'],
    ['a toggle instead of a state', { numbers: [1], claimed: 'toggle' }, 'claimed'],
    ['an assignee from the model', { numbers: [1], claimed: true, assignee: 'ag_x' }, 'assignee'],
  ])('refuses %s (invalid_input)', async (_name, body, field) => {
    const reply = await me.post('set-claim', { channel: board, ...body });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_input', field });
  });

  it('a checkpoint is appended, moves updatedAt, and is an event', async () => {
    const [n] = await me.create({ channel: board, tasks: titles('checkpointed') });
    const before = (await me.get(board, n)).task.updatedAt;
    const seq = (await h.events()).body.events.at(-1).seq;
    const reply = await peer.post('add-checkpoint', { channel: board, number: n, summary: 'Half done: parser works.' });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      checkpoint: { id: expect.stringMatching(/^ckp_/), summary: 'Half done: parser works.', author: 'ag_peer', createdAt: expect.any(String) },
      taskUpdatedAt: expect.any(String),
    });
    const task = (await me.get(board, n)).task;
    expect(task.updatedAt).toBe(reply.body.taskUpdatedAt);
    expect(Date.parse(task.updatedAt)).toBeGreaterThan(Date.parse(before));
    expect((await h.events(seq)).body.events).toEqual([
      { seq: seq + 1, type: 'task.checkpointed', channel: board, number: n, agent: 'ag_peer', at: reply.body.taskUpdatedAt },
    ]);
  });

  it.each([
    ['a blank summary', ' \n ', 400, 'invalid_input'],
    ['a summary over 4000 characters', 'x'.repeat(4001), 400, 'invalid_input'],
  ])('refuses %s', async (_name, summary, status, code) => {
    const [n] = await me.create({ channel: board, tasks: titles('c') });
    const reply = await me.post('add-checkpoint', { channel: board, number: n, summary });
    expect(reply.status).toBe(status);
    expect(reply.body.error).toMatchObject({ code, field: 'summary' });
  });

  it('takes a summary of exactly 4000 characters, and refuses missing and deleted tasks', async () => {
    const [n, gone] = await me.create({ channel: board, tasks: titles('c', 'gone') });
    expect((await me.post('add-checkpoint', { channel: board, number: n, summary: 'y'.repeat(4000) })).status).toBe(201);
    expect((await me.post('add-checkpoint', { channel: board, number: 99999, summary: 's' })).body.error.code).toBe('task_not_found');
    await me.post('delete', { channel: board, number: gone });
    const reply = await me.post('add-checkpoint', { channel: board, number: gone, summary: 's' });
    expect(reply.status).toBe(410);
    expect(reply.body.error.code).toBe('task_deleted');
  });
});
