import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommandRuntime } from '../../activities/runtimes/command';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { runWorkflowId } from '../../workflows/ids';
import { releaseSpawnsSignal, reserveSpawnsUpdate } from '../../workflows/run/messages';
import { connectTemporal } from '../support/temporal';
import { closeAll, connect, operator, task } from '../support/team';

/** Spawn quotas are the run's to count; each refusal names its quota and changes nothing. */
afterAll(closeAll);

async function runWith(limits: Record<string, number>) {
  const res = await operator.request('POST', '/runs', { task: 'Stay within bounds.', limits });
  expect(res.status).toBe(201);
  return { runId: res.json.run_id as string, root: await connect(res.json.root.agent_token) };
}

const team = (name: string, n: number) => ({
  name,
  task: `Team ${name}.`,
  roles: Array.from({ length: n }, (_, i) => ({ role: `r${i}`, skill: 'worker', description: `Part ${i} of ${name}.` })),
});

const agentCount = async (runId: string) => (await operator.request('GET', `/runs/${runId}`)).json.agent_count as number;

it('refuses the spawn past the run\'s agent limit, and the task stays ready', async () => {
  const { runId, root } = await runWith({ max_agents: 3 });
  await root.ok('declare_plan', { tasks: [task('a'), task('b'), task('c')] });
  await root.ok('spawn_agent', { task_id: 'a' });
  await root.ok('spawn_agent', { task_id: 'b' });
  const refused = await root.fail('spawn_agent', { task_id: 'c' });
  expect(refused).toMatchObject({ code: 'quota_exceeded', quota: 'agents_per_run', limit: 3, current: 3 });
  expect(await agentCount(runId)).toBe(3);
  expect((await root.ok('list_ready', {})).ready).toEqual(['c']);
  // create_team counts against the same limit.
  expect(await root.fail('create_team', team('more', 1))).toMatchObject({ code: 'quota_exceeded', quota: 'agents_per_run' });
});

it('refuses a leader more direct children than it may keep records of, by spawn or by team', async () => {
  const { runId, root } = await runWith({ max_children_per_leader: 2 });
  await root.ok('declare_plan', { tasks: [task('a'), task('b'), task('c')] });
  await root.ok('spawn_agent', { task_id: 'a' });
  expect(await root.fail('create_team', team('two', 2))).toMatchObject({ code: 'quota_exceeded', quota: 'children_per_leader', limit: 2, current: 1 });
  await root.ok('spawn_agent', { task_id: 'b' });
  expect(await root.fail('spawn_agent', { task_id: 'c' })).toMatchObject({ code: 'quota_exceeded', quota: 'children_per_leader', current: 2 });
  // Refused before anything happened: the task is still ready, the run holds three agents.
  expect((await root.ok('list_ready', {})).ready).toEqual(['c']);
  expect(await agentCount(runId)).toBe(3);
});

it('refuses spawns faster than the run\'s rate with a retry time, and lets them through after it', async () => {
  const { runId, root } = await runWith({ spawns_per_second: 0.5, spawn_burst: 1 });
  await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
  await root.ok('spawn_agent', { task_id: 'a' });
  const refused = await root.fail('spawn_agent', { task_id: 'b' });
  expect(refused).toMatchObject({ code: 'quota_exceeded', quota: 'spawn_rate', limit: 0.5 });
  expect(refused.retry_after_ms).toBeGreaterThan(0);
  expect(refused.retry_after_ms).toBeLessThanOrEqual(2000);
  await new Promise((r) => setTimeout(r, refused.retry_after_ms as number));
  await root.ok('spawn_agent', { task_id: 'b' });
  expect(await agentCount(runId)).toBe(3);
});

it('refuses a team larger than the spawns a run may have in flight, or than its burst', async () => {
  const { runId, root } = await runWith({ max_concurrent_spawns: 2 });
  expect(await root.fail('create_team', team('big', 3))).toMatchObject({ code: 'quota_exceeded', quota: 'concurrent_spawns', limit: 2 });
  const burst = await runWith({ spawn_burst: 2 });
  expect(await burst.root.fail('create_team', team('big', 3))).toMatchObject({ code: 'quota_exceeded', quota: 'spawn_rate', limit: 2 });
  expect(await agentCount(runId)).toBe(1);
  // A team within both goes through, and its slots in flight are free again afterwards.
  expect((await root.ok('create_team', team('fits', 2))).members).toHaveLength(2);
  expect((await root.ok('create_team', team('again', 2))).members).toHaveLength(2);
});

it('holds one reservation per id: a spawn step sent again (its answer lost with a killed worker) finds the first, never takes a second', async () => {
  const { runId } = await runWith({ max_concurrent_spawns: 2 });
  const { client, close } = await connectTemporal();
  try {
    const run = client.workflow.getHandle(runWorkflowId(runId));
    const reserve = (reservation_id: string, count: number) => run.executeUpdate(reserveSpawnsUpdate, { args: [{ count, reservation_id }] });
    expect(await reserve('first', 2)).toEqual({ reservation_id: 'first' });
    expect(await reserve('first', 2)).toEqual({ reservation_id: 'first' });
    // Both in-flight slots are the first reservation's, once.
    const refused = await reserve('second', 1).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((refused as WorkflowUpdateFailedError).cause as { type?: string; details?: unknown[] }).details?.[0]).toMatchObject({ quota: 'concurrent_spawns', current: 2 });
    // Given back (nothing spawned), its room is free again; an id the run never held is given back harmlessly.
    await run.signal(releaseSpawnsSignal, { reservation_id: 'first', spawned: 0 });
    await run.signal(releaseSpawnsSignal, { reservation_id: 'never-held', spawned: 0 });
    expect(await reserve('second', 2)).toEqual({ reservation_id: 'second' });
    expect(await agentCount(runId)).toBe(1);
  } finally {
    await close();
  }
});

it('refuses an agent process past the host\'s limit, and takes one again once a process ends', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-quota-'));
  const runtime = new CommandRuntime(() => undefined, 1);
  const payload = (name: string) => ({ run_id: 'run_000000000000', agent_id: `ag_00000000000${name}`, name, role: 'r', skill: 'worker', model: null, token: 't', mcp_url: '', task_mcp_url: '', isphere_mcp_url: '', inbox_url: '', skill_body: '', first_message: '', skills: [], rules: [], workspace_path: dir, artifacts_path: null, mode: 'first' as const });
  try {
    runtime.launch(['sleep', '30'], payload('1'), path.join(dir, 'a'), 'first', { PATH: '/usr/bin:/bin' });
    expect(() => runtime.launch(['sleep', '30'], payload('2'), path.join(dir, 'b'), 'first', { PATH: '/usr/bin:/bin' })).toThrow(/already runs 1 agent processes/);
    expect(fs.existsSync(path.join(dir, 'b', 'runtime.pid'))).toBe(false);
    await runtime.stop(path.join(dir, 'a'));
    // The exit is seen asynchronously; the next launch is taken once it is.
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        runtime.launch(['sleep', '30'], payload('2'), path.join(dir, 'b'), 'first', { PATH: '/usr/bin:/bin' });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await runtime.stop(path.join(dir, 'b'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
