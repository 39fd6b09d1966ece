import { Client, Connection } from '@temporalio/client';
import { temporalTargetOf } from '../support/temporal';
import { closeAll, connect, env, operator, spawn, startRun, task, waitForInbox } from '../support/team';
import { eventually } from '../support/clients';
import { revocationsQuery, tokenRegistryId } from '../../src/common/pure/revocations';
import { agentWorkflowId } from '../../workflows/ids';
import { leftRunning, untilNothingRunning } from '../support/ended';

/** Runs end on an operator's word, and the run list shows them. */
let connection: Connection;
let client: Client;

beforeAll(async () => {
  connection = await Connection.connect(temporalTargetOf(env));
  client = new Client({ connection, namespace: env.namespace });
});
afterAll(async () => {
  await closeAll();
  await connection.close();
});

async function threeLevels() {
  const run = await startRun(undefined, 'Three levels, then stop.');
  await run.root.ok('declare_plan', { tasks: [task('lead', [], 'lead')] });
  const lead = await spawn(run.root, run.runId, 'lead');
  await lead.client.ok('declare_plan', { tasks: [task('leaf')] });
  const leaf = await spawn(lead.client, run.runId, 'leaf');
  return { ...run, lead, leaf };
}

describe('POST /api/runs/:run/cancel', () => {
  it('ends a three-level run: every agent terminated, nothing left running, events say who and why', async () => {
    const run = await threeLevels();
    // Task board changes run as short workflows of the run: each has ended by the time its call answers, and
    // Temporal's visibility, which leftRunning reads, says so a moment later (ci34 read it at once, under load).
    for (const token of [run.root.token, run.leaf.client.token]) {
      const board = await connect(token, 'agentteam');
      await board.ok('task_create', { channel: run.runId, tasks: [{ title: 'Left behind?' }], idempotency_key: 'ended-run' });
      await board.ok('task_set_claim', { channel: run.runId, numbers: [1], claimed: token === run.root.token });
    }
    await eventually(async () => ((await leftRunning(client, env.dataDir, run.runId)).length === 4 ? true : undefined)).catch(() => undefined);
    expect(await leftRunning(client, env.dataDir, run.runId)).toHaveLength(4);
    const res = await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: 'Wrong task.' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ run_id: run.runId, status: 'cancelled' });
    // Every token of the run was revoked before the cancel answered, not as each agent ended: the registry has it now.
    const registry = client.workflow.getHandle(tokenRegistryId(env.processEnv.DIPPER_TASK_QUEUE ?? 'dipper'));
    expect((await registry.query(revocationsQuery, 0)).entries.map((e) => e.key)).toContain(run.runId);
    await untilNothingRunning(client, env.dataDir, run.runId);

    const events = await operator.events(run.runId);
    expect(events.filter((e) => e.type === 'run_cancelled').map((e) => e.data)).toEqual([{ by: 'operator', reason: 'Wrong task.' }]);
    expect(events.some((e) => e.type === 'run_completed')).toBe(false);
    const stopped = events.filter((e) => e.type === 'agent_completed').map((e) => e.agent_id);
    expect(stopped.sort()).toEqual([run.rootId, run.lead.agentId, run.leaf.agentId].sort());
    // Every agent's token is refused now.
    for (const member of [run.root, run.lead.client, run.leaf.client]) {
      await eventually(async () => ((await member.inbox(0, 0).catch((e: Error) => e.message)) as string).toString().includes('token_revoked') || undefined);
    }
    const view = await operator.request('GET', `/runs/${run.runId}`);
    expect(view.json.status).toBe('cancelled');
  });

  it('answers the same for a run already ended, and 404 for one that never was', async () => {
    const run = await startRun(undefined, 'Cancel me twice.');
    await operator.request('POST', `/runs/${run.runId}/cancel`);
    await untilNothingRunning(client, env.dataDir, run.runId);
    const again = await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: 'again' });
    expect(again.json).toEqual({ run_id: run.runId, status: 'cancelled' });
    expect((await operator.request('POST', '/runs/run_000000000000/cancel')).status).toBe(404);
    expect((await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: '' })).json.error).toMatchObject({ code: 'invalid_input', field: 'reason' });
  });
});

describe('GET /api/runs', () => {
  it('lists runs newest first with status, task, root, age and agent count, filtered by status', async () => {
    const ended = await threeLevels();
    await operator.request('POST', `/runs/${ended.runId}/cancel`);
    await untilNothingRunning(client, env.dataDir, ended.runId);
    const live = await startRun(undefined, 'Still going.');
    const row = async (status: string, runId: string) =>
      eventually(async () => {
        const res = await operator.request('GET', `/runs?status=${status}&page_size=200`);
        return (res.json.runs as { run_id: string }[]).find((r) => r.run_id === runId) as Record<string, unknown> | undefined;
      });
    expect(await row('active', live.runId)).toMatchObject({ status: 'active', task: 'Still going.', root_agent_id: live.rootId, ended_at: null, agent_count: 1 });
    const cancelled = await row('cancelled', ended.runId);
    expect(cancelled).toMatchObject({ status: 'cancelled', task: 'Three levels, then stop.', root_agent_id: ended.rootId, agent_count: 3 });
    expect(typeof cancelled.age_seconds).toBe('number');
    expect(Date.parse(cancelled.ended_at as string)).toBeGreaterThanOrEqual(Date.parse(cancelled.started_at as string));
    // A filter keeps to its status.
    const active = (await operator.request('GET', '/runs?status=active&page_size=200')).json.runs as { run_id: string; status: string }[];
    expect(active.every((r) => r.status === 'active')).toBe(true);
    expect(active.some((r) => r.run_id === ended.runId)).toBe(false);
  });

  it('pages: each page is new, the pages cover the list, a bad token is the caller\'s error', async () => {
    for (let i = 0; i < 3; i++) await startRun(undefined, `Page filler ${i}.`);
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const res: { json: { runs: { run_id: string }[]; next_page_token: string | null } } = await operator.request('GET', `/runs?page_size=2${token ? `&page_token=${token}` : ''}`);
      expect(res.json.runs.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.runs.map((r) => r.run_id));
      token = res.json.next_page_token;
      pages++;
    } while (token && pages < 3);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect((await operator.request('GET', '/runs?page_size=500')).json.error).toMatchObject({ code: 'invalid_input', field: 'page_size' });
    // A token this API never gave out, or gave out for another filter, is refused before Temporal sees it (it took 14 s to fail there).
    const mine = (await operator.request('GET', '/runs?page_size=1')).json.next_page_token as string;
    for (const query of ['page_token=AAAA', 'page_token=', `page_token=${mine.slice(2)}`, `status=active&page_token=${mine}`]) {
      const res = await operator.request('GET', `/runs?${query}`);
      expect([query, res.status, res.json.error?.code, res.json.error?.field]).toEqual([query, 400, 'invalid_input', 'page_token']);
    }
    expect((await operator.request('GET', '/runs?status=sleeping')).json.error).toMatchObject({ code: 'invalid_input', field: 'status' });
  });
});

describe('the run deadline', () => {
  it('warns the root, then cancels a three-level run when it passes, leaving nothing running', async () => {
    const started = await operator.request('POST', '/runs', { task: 'Race the clock.', deadline_seconds: 4 });
    expect(started.status).toBe(201);
    const runId = started.json.run_id as string;
    const root = await connect(started.json.root.agent_token);
    await root.ok('declare_plan', { tasks: [task('lead', [], 'lead')] });
    const lead = await spawn(root, runId, 'lead');
    await lead.client.ok('declare_plan', { tasks: [task('leaf')] });
    await spawn(lead.client, runId, 'leaf');
    const view = (await operator.request('GET', `/runs/${runId}`)).json;
    expect(Date.parse(view.deadline_at) - view.created_at).toBe(4000);

    const warning = await waitForInbox(root, (m) => m.kind === 'system' && String(m.content).startsWith('deadline:'));
    expect(warning.content).toContain(view.deadline_at);
    await untilNothingRunning(client, env.dataDir, runId);
    const events = await operator.events(runId);
    expect(events.find((e) => e.type === 'run_cancelled')?.data).toMatchObject({ by: 'deadline' });
    expect(events.filter((e) => e.type === 'run_deadline_warning')).toHaveLength(1);
    expect((await operator.request('GET', `/runs/${runId}`)).json.status).toBe('cancelled');
  });

  it('is off for a run that asks for none', async () => {
    const started = await operator.request('POST', '/runs', { task: 'No clock.', deadline_seconds: 0 });
    expect((await operator.request('GET', `/runs/${started.json.run_id}`)).json.deadline_at).toBeNull();
    expect((await operator.request('POST', '/runs', { task: 'x', deadline_seconds: -1 })).json.error).toMatchObject({ code: 'invalid_input', field: 'deadline_seconds' });
  });
});

describe('terminating a leader', () => {
  it('ends its whole subtree at once, not one grace period per level, and leaves the rest of the run alone', async () => {
    const run = await startRun(undefined, 'Four levels.');
    await run.root.ok('declare_plan', { tasks: [task('lead', [], 'lead')] });
    const lead = await spawn(run.root, run.runId, 'lead');
    await lead.client.ok('declare_plan', { tasks: [task('sub', [], 'lead')] });
    const sub = await spawn(lead.client, run.runId, 'sub');
    await sub.client.ok('declare_plan', { tasks: [task('leaf')] });
    const leaf = await spawn(sub.client, run.runId, 'leaf');
    const subtree = [lead.agentId, sub.agentId, leaf.agentId];
    // A terminated agent keeps its (closed-for-business) record until the run ends; its status says it ended.
    const statuses = async () =>
      Object.fromEntries(((await operator.request('GET', `/runs/${run.runId}/agents`)).json.agents as { agent_id: string; status: string }[]).map((a) => [a.agent_id, a.status]));

    await run.root.ok('terminate_child', { agent_id: lead.agentId, force: true });
    const sentinel = await waitForInbox(lead.client, (m) => m.kind === 'terminate');
    await lead.client.ack(sentinel.seq);
    // Neither sub nor leaf acknowledges anything: they end because their leader did.
    await eventually(async () => {
      const now = await statuses();
      return subtree.every((a) => now[a] === 'terminated') || undefined;
    }, 20_000, 50);
    // Their tokens die with them, and first: revoked before the process is stopped (which can take seconds), so the
    // window in which a terminated agent's token still works is the gateways' refresh (250 ms), not the stop.
    for (const member of [sub.client, leaf.client]) await eventually(async () => ((await member.inbox(0, 0).then(() => '', (e: Error) => e.message)).includes('token_revoked') ? true : undefined));
    for (const agentId of [lead.agentId, ...subtree.slice(1)]) {
      const steps = await eventually(async () => {
        const history = await client.workflow.getHandle(agentWorkflowId(run.runId, agentId)).fetchHistory();
        const names = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n) => n === 'revokeTokens' || n === 'stopRuntime');
        return names.includes('stopRuntime') ? names : undefined;
      });
      expect([agentId, steps]).toEqual([agentId, ['revokeTokens', 'stopRuntime']]);
    }

    // The event log is written in the background: wait for both records.
    const forced = await eventually(async () => {
      const found = (await operator.events(run.runId, 'terminate.forced')).filter((e) => e.data.reason === 'leader_terminated').map((e) => e.agent_id as string);
      return found.length >= 2 ? found : undefined;
    });
    expect(forced.sort()).toEqual([sub.agentId, leaf.agentId].sort());
    // "At once, not one grace period per level", by what ended them: each ended on its leader's end, and the only
    // forced ends in the run are the root's force and those two (a level that waited out its grace period would be
    // forced again, with reason watchdog_grace).
    const byAgent = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    const ends = await eventually(async () => {
      const found = (await operator.events(run.runId, 'agent_completed')).filter((e) => subtree.slice(1).includes(e.agent_id as string));
      return found.length >= 2 ? found : undefined;
    });
    expect(ends.map((e) => [e.agent_id, e.data]).sort(byAgent)).toEqual(
      [[sub.agentId], [leaf.agentId]].sort(byAgent).map(([a]) => [a, expect.objectContaining({ stop_reason: 'cancelled', leader_terminated: true })]),
    );
    const allForced = await eventually(async () => {
      const found = await operator.events(run.runId, 'terminate.forced');
      return found.length >= 3 ? found : undefined;
    });
    expect(allForced.map((e) => [e.agent_id, e.data.reason]).sort(byAgent)).toEqual(
      [
        [run.rootId, 'leader_force'],
        [sub.agentId, 'leader_terminated'],
        [leaf.agentId, 'leader_terminated'],
      ].sort(byAgent),
    );
    // The root and the run go on.
    expect((await statuses())[run.rootId]).toBe('active');
    expect((await operator.request('GET', `/runs/${run.runId}`)).json.status).toBe('active');
    expect(Array.isArray((await run.root.ok('list_peers', {})).peers)).toBe(true);
  });
});
