import fs from 'node:fs';
import { closeAll, eventsOf, spawn, startRun, task } from '../support/team';

afterAll(closeAll);

describe('declare_plan', () => {
  it('persists the DAG, computes readiness and returns the plan file', async () => {
    const { root, runId } = await startRun();
    const plan = await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a']), task('c', ['a', 'b'])] });
    expect(plan.plan_id).toMatch(/^pl_/);
    expect(plan.tasks.map((t: any) => [t.id, t.status])).toEqual([
      ['a', 'ready'],
      ['b', 'blocked'],
      ['c', 'blocked'],
    ]);
    const file = JSON.parse(fs.readFileSync(plan.plan_path, 'utf8'));
    expect(file.tasks.map((t: any) => t.id)).toEqual(['a', 'b', 'c']);
    expect(await root.ok('list_ready')).toEqual({ ready: ['a'] });
    await eventsOf(runId, 'plan_declared');
  });

  it.each([
    ['empty_plan', []],
    ['duplicate_task_id', [task('a'), task('a')]],
    ['self_dep', [task('a', ['a'])]],
    ['unknown_dep', [task('a', ['zz'])]],
    ['cycle_detected', [task('a', ['c']), task('b', ['a']), task('c', ['b'])]],
    ['unknown_skill', [task('a', [], 'no-such-skill')]],
  ])('refuses with %s and leaves no active plan', async (code, tasks) => {
    const { root } = await startRun();
    const error = await root.fail('declare_plan', { tasks });
    expect(error.code).toBe(code);
    expect((await root.fail('list_ready')).code).toBe('no_active_plan');
  });

  it('names the cycle it found', async () => {
    const { root } = await startRun();
    const error = await root.fail('declare_plan', { tasks: [task('a', ['b']), task('b', ['a'])] });
    expect(error.cycle).toEqual(['a', 'b', 'a']);
  });

  it('refuses a second plan until the first is removed, then accepts it', async () => {
    const { root } = await startRun();
    const first = await root.ok('declare_plan', { tasks: [task('a')] });
    expect((await root.fail('declare_plan', { tasks: [task('b')] })).code).toBe('plan_already_declared');
    expect(await root.ok('remove_plan')).toEqual({ removed_plan_id: first.plan_id });
    expect(fs.existsSync(first.plan_path)).toBe(false);
    expect(fs.existsSync(first.plan_path.replace(/\.json$/, '.removed.json'))).toBe(true);
    const second = await root.ok('declare_plan', { tasks: [task('b')] });
    expect(second.plan_id).not.toBe(first.plan_id);
  });

  it('treats unknown fields as invalid_input naming the field', async () => {
    const { root } = await startRun();
    const error = await root.fail('declare_plan', { tasks: [{ ...task('a'), leader: 'me' }] });
    expect(error).toMatchObject({ code: 'invalid_input', field: 'tasks[0].leader' });
  });

  it('refuses plans above the task limit', async () => {
    const { root } = await startRun({ max_plan_tasks: 3 });
    const error = await root.fail('declare_plan', { tasks: ['a', 'b', 'c', 'd'].map((id) => task(id)) });
    expect(error).toMatchObject({ code: 'invalid_input', field: 'tasks' });
  });
});

describe('remove_plan', () => {
  it('is refused without a plan and while a task is in flight', async () => {
    const { root, runId } = await startRun();
    expect((await root.fail('remove_plan')).code).toBe('no_active_plan');
    await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
    const child = await spawn(root, runId, 'a');
    const error = await root.fail('remove_plan');
    expect(error.code).toBe('plan_in_use');
    expect(error.in_flight).toEqual([{ task_id: 'a', agent_id: child.agentId }]);
  });
});

describe('update_plan_task', () => {
  it('marks a task done once and reports what became ready', async () => {
    const { root } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a'])] });
    expect(await root.ok('update_plan_task', { task_id: 'a', status: 'done', note: 'did it myself' })).toEqual({
      task_id: 'a',
      status: 'done',
      newly_ready: ['b'],
    });
    expect((await root.fail('update_plan_task', { task_id: 'a', status: 'failed' })).code).toBe('invalid_transition');
    expect((await root.fail('update_plan_task', { task_id: 'zz', status: 'done' })).code).toBe('unknown_task');
    expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });
  });

  it('refuses a task in flight under a live child, and without a plan', async () => {
    const { root, runId } = await startRun();
    expect((await root.fail('update_plan_task', { task_id: 'a', status: 'done' })).code).toBe('no_active_plan');
    await root.ok('declare_plan', { tasks: [task('a')] });
    await spawn(root, runId, 'a');
    expect((await root.fail('update_plan_task', { task_id: 'a', status: 'done' })).code).toBe('invalid_transition');
  });
});
