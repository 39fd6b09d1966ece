import { AgentClient } from '../support/clients';
import { closeAll, connect, spawn, startRun, task } from '../support/team';

afterAll(closeAll);

/** A run's root on both surfaces: beidou for the team, agentteam for its board (named by the run id). */
async function board() {
  const run = await startRun();
  const tasks = await connect(run.root.token, 'agentteam');
  return { ...run, tasks };
}

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('the agentteam surface', () => {
  let ctx: Awaited<ReturnType<typeof board>>;
  beforeAll(async () => {
    ctx = await board();
  });

  it('lists its seven tools with annotations from the registry', async () => {
    const { tools } = await ctx.tasks.mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual(['task_list', 'task_get', 'task_create', 'task_update', 'task_set_claim', 'task_checkpoint', 'task_delete']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(byName.task_list).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.task_delete).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.task_set_claim).toMatchObject({ idempotentHint: true });
  });

  it('creates a rich task, reads it back in full, updates it, checkpoints it, claims and releases it, and deletes it', async () => {
    const { tasks, runId, rootId } = ctx;
    const created = await tasks.ok('task_create', {
      channel: runId,
      tasks: [{ title: 'Write the parser', description: 'Tokens first.', priority: 'high', labels: ['parser'], checklist: [{ text: 'lexer' }], urls: ['https://example.com/spec'] }],
    });
    expect(created).toEqual({ reused: false, tasks: [expect.objectContaining({ number: expect.any(Number), channel: runId, title: 'Write the parser', parent_number: null })] });
    const number = created.tasks[0].number;

    const got = await tasks.ok('task_get', { channel: runId, number });
    expect(got.task).toMatchObject({
      number,
      title: 'Write the parser',
      description: 'Tokens first.',
      priority: 'high',
      status: 'todo',
      labels: ['parser'],
      checklist: [{ text: 'lexer', done: false }],
      creator: rootId,
      assignee: null,
    });
    expect(got.task.updated_at).toMatch(iso);
    expect(got).toMatchObject({ subtasks: [], subtask_count: 0, checkpoints: [], checkpoint_count: 0 });

    const updated = await tasks.ok('task_update', { channel: runId, number, status: 'in_progress', expected_updated_at: got.task.updated_at });
    expect(updated.task).toMatchObject({ status: 'in_progress', title: 'Write the parser' });
    expect(updated.task.updated_at > got.task.updated_at).toBe(true);

    const cp = await tasks.ok('task_checkpoint', { channel: runId, number, summary: 'Lexer done.' });
    expect(cp.checkpoint).toMatchObject({ summary: 'Lexer done.', author: rootId });

    // Claims set a state: claiming twice changes it once.
    expect(await tasks.ok('task_set_claim', { channel: runId, numbers: [number], claimed: true })).toEqual({ changed: 1, unchanged: 0, failures: [] });
    expect(await tasks.ok('task_set_claim', { channel: runId, numbers: [number], claimed: true })).toEqual({ changed: 0, unchanged: 1, failures: [] });
    expect((await tasks.ok('task_get', { channel: runId, number })).task.assignee).toBe(rootId);
    expect(await tasks.ok('task_set_claim', { channel: runId, numbers: [number], claimed: false })).toEqual({ changed: 1, unchanged: 0, failures: [] });

    const after = await tasks.ok('task_get', { channel: runId, number });
    expect(after.checkpoints.map((c: { summary: string }) => c.summary)).toEqual(['Lexer done.']);

    expect(await tasks.ok('task_delete', { channel: runId, number })).toEqual({ deleted: [number], promoted: [] });
    expect(await tasks.fail('task_get', { channel: runId, number })).toMatchObject({ code: 'task_deleted', retryable: false });
  });

  it('browses, searches and pages a board; status "all" only searches', async () => {
    const { tasks, runId } = ctx;
    const titles = Array.from({ length: 25 }, (_, i) => `Browse item ${i}`);
    const made = await tasks.ok('task_create', { channel: runId, tasks: titles.map((title) => ({ title })) });
    expect(made.tasks).toHaveLength(25);
    const first = await tasks.ok('task_list', { channel: runId, sort: 'number_asc' });
    expect(first.items).toHaveLength(20);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await tasks.ok('task_list', { channel: runId, sort: 'number_asc', cursor: first.next_cursor });
    const seen = [...first.items, ...second.items].map((t: { title: string }) => t.title).filter((t: string) => t.startsWith('Browse item'));
    expect(seen).toEqual(titles);
    expect(second.next_cursor).toBeUndefined();
    // A cursor belongs to its query.
    expect(await tasks.fail('task_list', { channel: runId, sort: 'updated_desc', cursor: first.next_cursor })).toMatchObject({
      code: 'invalid_cursor',
      field_errors: { cursor: expect.any(String) },
    });
    // Every word must match: "13" narrows "browse item" to one.
    const found = await tasks.ok('task_list', { channel: runId, query: 'browse ITEM 13' });
    expect(found.items.map((t: { title: string }) => t.title)).toEqual(['Browse item 13']);
    expect(await tasks.fail('task_list', { channel: runId, status: 'all' })).toMatchObject({ code: 'invalid_input', field_errors: { status: expect.any(String) } });
    expect((await tasks.ok('task_list', { channel: runId, status: 'all', query: 'item 13' })).items).toHaveLength(1);
    expect(await tasks.fail('task_list', { channel: runId, limit: 101 })).toMatchObject({ code: 'invalid_input', field_errors: { limit: expect.any(String) } });
  });

  it('creates subtasks by parent number and by parent scope, and lists them only when asked', async () => {
    const { tasks, runId } = ctx;
    const parent = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Parent' }] })).tasks[0];
    const byNumber = await tasks.ok('task_create', { channel: runId, parent: parent.number, tasks: [{ title: 'Child A' }, { title: 'Child B' }] });
    expect(byNumber.tasks.map((t: { parent_number: number }) => t.parent_number)).toEqual([parent.number, parent.number]);
    const byScope = await tasks.ok('task_create', { parent_task_scope: { kind: 'task', scope_id: parent.scope_id }, tasks: [{ title: 'Child C', description: 'rich' }] });
    expect(byScope.tasks[0]).toMatchObject({ channel: runId, parent_number: parent.number });
    const detail = await tasks.ok('task_get', { channel: runId, number: parent.number });
    expect(detail.subtask_count).toBe(3);
    expect(detail.subtasks.map((t: { title: string }) => t.title).sort()).toEqual(['Child A', 'Child B', 'Child C']);
    const top = await tasks.ok('task_list', { channel: runId, query: 'Child' });
    expect(top.items).toHaveLength(0);
    const all = await tasks.ok('task_list', { channel: runId, query: 'Child', include_subtasks: true });
    expect(all.items).toHaveLength(3);

    // A parent with children needs a mode; promote keeps them.
    expect(await tasks.fail('task_delete', { channel: runId, number: parent.number })).toMatchObject({ code: 'subtask_mode_required' });
    const promoted = await tasks.ok('task_delete', { channel: runId, number: parent.number, subtask_mode: 'promote' });
    expect(promoted.deleted).toEqual([parent.number]);
    expect(promoted.promoted.sort()).toEqual([...byNumber.tasks, ...byScope.tasks].map((t: { number: number }) => t.number).sort());
  });

  it.each([
    ['both locators', (c: string) => ({ channel: c, parent_task_scope: { kind: 'task', scope_id: 'tsk_x' }, tasks: [{ title: 't' }] }), 'invalid_locator', 'channel'],
    ['no locator', () => ({ tasks: [{ title: 't' }] }), 'invalid_locator', 'channel'],
    ['parent with a scope', () => ({ parent: 1, parent_task_scope: { kind: 'task', scope_id: 'tsk_x' }, tasks: [{ title: 't' }] }), 'invalid_locator', 'parent'],
    ['a non-positive parent', (c: string) => ({ channel: c, parent: 0, tasks: [{ title: 't' }] }), 'invalid_input', 'parent'],
    ['a rich batch', (c: string) => ({ channel: c, tasks: [{ title: 'a' }, { title: 'b', description: 'no' }] }), 'invalid_input', 'tasks[1].description'],
    ['no tasks', (c: string) => ({ channel: c, tasks: [] }), 'invalid_input', 'tasks'],
    ['a non-task scope', () => ({ parent_task_scope: { kind: 'thread', scope_id: 'x' }, tasks: [{ title: 't' }] }), 'invalid_input', 'parent_task_scope.kind'],
    ['a blank idempotency key', (c: string) => ({ channel: c, tasks: [{ title: 't' }], idempotency_key: '   ' }), 'invalid_input', 'idempotency_key'],
    ['an unknown field', (c: string) => ({ channel: c, tasks: [{ title: 't' }], workspace_id: 'w' }), 'invalid_input', 'workspace_id'],
  ])('refuses a create with %s, naming the field, and creates nothing', async (_what, args, code, field) => {
    const { tasks, runId } = ctx;
    const before = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Counter before' }] })).tasks[0].number;
    const refused = await tasks.fail('task_create', args(runId));
    expect(refused).toMatchObject({ code, retryable: false });
    expect(Object.keys(refused.field_errors as object)).toContain(field);
    expect(Object.keys(refused).sort()).toEqual(expect.arrayContaining(['code', 'message', 'retryable']));
    // No number was taken by the refused call.
    const after = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Counter after' }] })).tasks[0].number;
    expect(after).toBe(before + 1);
  });

  it('refuses a parent scope of a deleted task and a target on another board', async () => {
    const { tasks, runId } = ctx;
    const gone = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Gone' }] })).tasks[0];
    await tasks.ok('task_delete', { channel: runId, number: gone.number });
    expect(await tasks.fail('task_create', { parent_task_scope: { kind: 'task', scope_id: gone.scope_id }, tasks: [{ title: 't' }] })).toMatchObject({ code: 'parent_not_found' });
    expect(await tasks.fail('task_create', { channel: runId, target: '#elsewhere:th1', tasks: [{ title: 't' }] })).toMatchObject({ code: 'target_conflict' });
    const sourced = await tasks.ok('task_create', { channel: runId, target: `#${runId}:th1`, tasks: [{ title: 'From a thread' }] });
    expect((await tasks.ok('task_get', { channel: runId, number: sourced.tasks[0].number })).task.thread).toBe(`#${runId}:th1`);
  });

  it('replays an idempotent create without creating again, and refuses the key with other arguments', async () => {
    const { tasks, runId } = ctx;
    const args = { channel: runId, tasks: [{ title: 'Exactly once' }], idempotency_key: 'create-once-1' };
    const first = await tasks.ok('task_create', args);
    const again = await tasks.ok('task_create', args);
    expect(again).toEqual({ ...first, reused: true });
    expect(first.reused).toBe(false);
    const listed = await tasks.ok('task_list', { channel: runId, query: 'Exactly once' });
    expect(listed.items).toHaveLength(1);
    expect(await tasks.fail('task_create', { ...args, tasks: [{ title: 'Something else' }] })).toMatchObject({ code: 'idempotency_conflict', retryable: false });
  });

  it('refuses a stale expected_updated_at with a refresh hint, and an empty update', async () => {
    const { tasks, runId } = ctx;
    const n = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Contended' }] })).tasks[0].number;
    const read = (await tasks.ok('task_get', { channel: runId, number: n })).task.updated_at;
    await tasks.ok('task_update', { channel: runId, number: n, title: 'Changed by someone' });
    const stale = await tasks.fail('task_update', { channel: runId, number: n, title: 'My change', expected_updated_at: read });
    expect(stale).toMatchObject({
      code: 'stale_update',
      retryable: false,
      field_errors: { expected_updated_at: expect.any(String) },
      suggested_action: { tool: 'task_get', arguments: { channel: runId, number: n } },
    });
    expect((await tasks.ok('task_get', { channel: runId, number: n })).task.title).toBe('Changed by someone');
    const empty = await tasks.fail('task_update', { channel: runId, number: n });
    expect(empty).toMatchObject({ code: 'empty_update', field_errors: { title: expect.any(String), status: expect.any(String), parent: expect.any(String) } });
    // Keyed by the fields a client can show it beside, never by a placeholder.
    expect(Object.keys(empty.field_errors as Record<string, string>).filter((f) => !/^[a-z_]+$/.test(f))).toEqual([]);
  });

  it('names the boards an agent may use when it asks for another', async () => {
    const refused = await ctx.tasks.fail('task_list', { channel: 'run_not_mine' });
    expect(refused).toMatchObject({ code: 'channel_not_found', suggested_action: { tool: 'task_list', arguments: { channel: ctx.runId } } });
    expect(refused.message).toContain(ctx.runId);
  });
});

describe('the result budget (32 KiB)', () => {
  const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

  it('shortens a long page, says so, and continues by cursor until every task was shown once', async () => {
    const { runId, tasks } = await board();
    const titles = Array.from({ length: 80 }, (_, i) => `Long ${String(i).padStart(2, '0')} ${'é'.repeat(480)}`);
    await tasks.ok('task_create', { channel: runId, tasks: titles.slice(0, 50).map((title) => ({ title })) });
    await tasks.ok('task_create', { channel: runId, tasks: titles.slice(50).map((title) => ({ title })) });
    const seen: string[] = [];
    let cursor: string | undefined;
    let shortened = 0;
    do {
      const page = await tasks.ok('task_list', { channel: runId, limit: 100, sort: 'number_asc', ...(cursor ? { cursor } : {}) });
      expect(bytes(page)).toBeLessThanOrEqual(32 * 1024);
      if (page.truncated) {
        shortened++;
        expect(page.truncated).toMatchObject({ reason: 'result_budget', budget_bytes: 32 * 1024, items_omitted: expect.any(Number) });
        expect(page.next_cursor).toEqual(expect.any(String));
      }
      seen.push(...page.items.map((t: { title: string }) => t.title));
      cursor = page.next_cursor;
    } while (cursor);
    expect(shortened).toBeGreaterThan(0);
    expect(seen).toEqual(titles);
  });

  it('cuts a long description in task_get, marking the cut and naming the field', async () => {
    const { runId, tasks } = await board();
    const n = (await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Wordy', description: '€'.repeat(20_000) }] })).tasks[0].number;
    const got = await tasks.ok('task_get', { channel: runId, number: n });
    expect(bytes(got)).toBeLessThanOrEqual(32 * 1024);
    expect(got.truncated).toMatchObject({ reason: 'result_budget', fields_cut: ['task.description'] });
    expect(got.task.description).toMatch(/^€+ … \[cut: \d+ more characters\]$/);
    expect(got.task.title).toBe('Wordy');
  });
});

describe('a team on the board', () => {
  it('gives a member its run and team boards, keeps claims per agent, and deletion to the creator', async () => {
    const { runId, root } = await startRun();
    const rootTasks = await connect(root.token, 'agentteam');
    await root.ok('declare_plan', { tasks: [task('a')] });
    const a = await spawn(root, runId, 'a');
    const aTasks = await connect(a.launch.token, 'agentteam');
    const teamId = a.result.team_id;
    expect(a.launch.task_mcp_url).toMatch(/\/mcp\/agentteam$/);

    const shared = (await rootTasks.ok('task_create', { channel: runId, tasks: [{ title: 'Shared work' }] })).tasks[0].number;
    const onTeam = await aTasks.ok('task_create', { channel: teamId, tasks: [{ title: 'Team work' }] });
    expect(onTeam.tasks[0].channel).toBe(teamId);
    // The leader reaches its team's board too.
    expect((await rootTasks.ok('task_list', { channel: teamId })).items.map((t: { title: string }) => t.title)).toEqual(['Team work']);

    await rootTasks.ok('task_set_claim', { channel: runId, numbers: [shared], claimed: true });
    const contested = await aTasks.ok('task_set_claim', { channel: runId, numbers: [shared, 999_999], claimed: true });
    expect(contested.changed).toBe(0);
    expect(contested.failures).toEqual([
      expect.objectContaining({ number: shared, code: 'claimed_by_other' }),
      expect.objectContaining({ number: 999_999, code: 'task_not_found' }),
    ]);
    expect((await aTasks.ok('task_set_claim', { channel: runId, numbers: [shared], claimed: false })).failures).toEqual([
      expect.objectContaining({ number: shared, code: 'not_assignee' }),
    ]);
    expect(await aTasks.fail('task_delete', { channel: runId, number: shared })).toMatchObject({ code: 'not_creator' });
  });

  it('filters by assignee and creator, refuses a deletion across creators, and a parent scope on a board the caller cannot reach', async () => {
    const { runId, root } = await startRun();
    const rootTasks = await connect(root.token, 'agentteam');
    await root.ok('declare_plan', { tasks: [task('a', [], 'lead')] });
    const a = await spawn(root, runId, 'a');
    const aTasks = await connect(a.launch.token, 'agentteam');
    await a.client.ok('declare_plan', { tasks: [task('c')] });
    const c = await spawn(a.client, runId, 'c');
    const cTasks = await connect(c.launch.token, 'agentteam');

    const [mine, theirs] = (await rootTasks.ok('task_create', { channel: runId, tasks: [{ title: 'F mine' }, { title: 'F theirs' }, { title: 'F loose' }] })).tasks.map(
      (t: { number: number }) => t.number,
    );
    await rootTasks.ok('task_set_claim', { channel: runId, numbers: [mine], claimed: true });
    await aTasks.ok('task_set_claim', { channel: runId, numbers: [theirs], claimed: true });
    const titles = async (filters: Record<string, string>) =>
      ((await rootTasks.ok('task_list', { channel: runId, query: 'F', filters })).items as { title: string }[]).map((t) => t.title).sort();
    expect(await titles({ assignee: 'me' })).toEqual(['F mine']);
    expect(await titles({ assignee: 'none' })).toEqual(['F loose']);
    expect(await titles({ assignee: a.agentId })).toEqual(['F theirs']);
    expect(await titles({ creator: 'me' })).toEqual(['F loose', 'F mine', 'F theirs']);

    // A subtask by another agent keeps the parent from being deleted with its children, but not from promoting them.
    await aTasks.ok('task_create', { channel: runId, parent: mine, tasks: [{ title: 'By a' }] });
    expect(await rootTasks.fail('task_delete', { channel: runId, number: mine, subtask_mode: 'delete' })).toMatchObject({ code: 'mixed_creators' });
    expect((await rootTasks.ok('task_delete', { channel: runId, number: mine, subtask_mode: 'promote' })).deleted).toEqual([mine]);

    // c works in a's team; the root's team board (where a is a member) is not c's.
    const teamBoard = a.result.team_id;
    const onTeam = (await rootTasks.ok('task_create', { channel: teamBoard, tasks: [{ title: 'Team only' }] })).tasks[0];
    expect(await cTasks.fail('task_create', { parent_task_scope: { kind: 'task', scope_id: onTeam.scope_id }, tasks: [{ title: 'Sneaked under' }] })).toMatchObject({
      code: 'parent_not_found',
    });
    expect(await cTasks.fail('task_list', { channel: teamBoard })).toMatchObject({ code: 'channel_not_found' });
    expect((await rootTasks.ok('task_get', { channel: teamBoard, number: onTeam.number })).subtask_count).toBe(0);
  });

  it("refuses task tools to a leader whose child's review waits, and lets them through once answered", async () => {
    const { runId, root } = await startRun();
    const rootTasks: AgentClient = await connect(root.token, 'agentteam');
    await root.ok('declare_plan', { tasks: [task('a')] });
    const a = await spawn(root, runId, 'a');
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
    for (const [tool, args] of [
      ['task_list', { channel: runId }],
      ['task_create', { channel: runId, tasks: [{ title: 'Sneaked in' }] }],
    ] as const) {
      const refused = await rootTasks.fail(tool, args);
      expect(refused).toMatchObject({ code: 'review_gate_denied', retryable: false, suggested_action: { tool: 'list_pending_reviews' } });
      expect(refused.message).toContain(a.agentId);
    }
    await root.ok('terminate_child', { agent_id: a.agentId });
    // Nothing was created behind the refusal.
    expect((await rootTasks.ok('task_list', { channel: runId, query: 'Sneaked' })).items).toEqual([]);
  });
});
