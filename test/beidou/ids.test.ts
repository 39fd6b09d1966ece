import { Client, Connection } from '@temporalio/client';
import { temporalTargetOf } from '../support/temporal';
import fs from 'node:fs';
import path from 'node:path';
import { declarePlanUpdate } from '../../workflows/agent/messages';
import { agentWorkflowId } from '../../workflows/ids';
import { closeAll, env, operator, spawn, startRun, task } from '../support/team';

afterAll(closeAll);

/** What a caller must never read: a server path, an errno code, a stack frame. */
function expectClean(error: { message: string }): void {
  expect(error.message).not.toContain(env.dataDir);
  expect(error.message).not.toMatch(/\/|\bE[A-Z]{3,}\b|\bat .+:\d+/);
}

describe('plan task ids', () => {
  it.each([
    ['100 percent signs', '%'.repeat(100)],
    ['65 characters', 'x'.repeat(65)],
    ['a parent folder', '..'],
    ['two dots inside', 'a..b'],
    ['a leading dot', '.hidden'],
    ['a slash', 'a/b'],
    ['a space', 'a b'],
    ['a non-ASCII letter', 'tâche'],
    ['an empty string', ''],
  ])('refuses %s as invalid_input naming the id, and declares nothing', async (_what, id) => {
    const { root } = await startRun();
    const error = await root.fail('declare_plan', { tasks: [task(id)] });
    expect(error).toMatchObject({ code: 'invalid_input', field: 'tasks[0].id' });
    expect((await root.fail('list_ready')).code).toBe('no_active_plan');
  });

  it('refuses a dependency that cannot be a task id', async () => {
    const { root } = await startRun();
    const error = await root.fail('declare_plan', { tasks: [task('a'), task('b', ['../a'])] });
    expect(error).toMatchObject({ code: 'invalid_input', field: 'tasks[1].depends_on[0]' });
  });

  it("names the artifacts folder after the id itself: {workspace}/artifacts/{plan_task_id}", async () => {
    const { root, runId } = await startRun();
    const ids = ['t1', 'T-1.2_b', 'x'.repeat(64)];
    await root.ok('declare_plan', { tasks: ids.map((id) => task(id)) });
    for (const id of ids) {
      const child = await spawn(root, runId, id);
      expect(child.launch.artifacts_path).toBe(path.join(child.launch.workspace_path, 'artifacts', id));
      expect(fs.statSync(child.launch.artifacts_path).isDirectory()).toBe(true);
      expect(child.launch.first_message).toContain(`plan_task_id: ${id}\nartifacts_path: ${child.launch.artifacts_path}\n`);
    }
  });
});

let connection: Connection;
beforeAll(async () => {
  connection = await Connection.connect(temporalTargetOf(env));
});
afterAll(() => connection?.close());

/**
 * "At once", as the agent's history shows it: each prepareSpawn that failed ran one attempt, and its failure says a
 * retry cannot help. A failure retried until it gave up shows a later attempt (or no failure while it still retries).
 */
async function failedSpawnSteps(runId: string, agentId: string): Promise<{ attempt: number; nonRetryable: boolean; type: string }[]> {
  const client = new Client({ connection, namespace: env.namespace });
  const events = (await client.workflow.getHandle(agentWorkflowId(runId, agentId)).fetchHistory()).events ?? [];
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  return events
    .filter((e) => e.activityTaskFailedEventAttributes)
    .map((e) => e.activityTaskFailedEventAttributes!)
    .filter((f) => byId.get(String(f.scheduledEventId))?.activityTaskScheduledEventAttributes?.activityType?.name === 'prepareSpawn')
    .map((f) => ({
      attempt: byId.get(String(f.startedEventId))?.activityTaskStartedEventAttributes?.attempt ?? 0,
      nonRetryable: f.failure?.applicationFailureInfo?.nonRetryable === true,
      type: f.failure?.applicationFailureInfo?.type ?? '',
    }));
}

describe('ids that reach the workflow without the gateway', () => {
  it('are refused at spawn at once, without a path in the answer, and the task stays ready', async () => {
    const { root, runId, rootId } = await startRun();
    const bad = '%'.repeat(100);
    const client = new Client({ connection, namespace: env.namespace });
    await client.workflow.getHandle(agentWorkflowId(runId, rootId)).executeUpdate(declarePlanUpdate, { args: [{ tasks: [task(bad)] }] });
    const error = await root.fail('spawn_agent', { task_id: bad });
    expect(error).toMatchObject({ code: 'invalid_input', field: 'task_id', retryable: false });
    expect(await failedSpawnSteps(runId, rootId)).toEqual([{ attempt: 1, nonRetryable: true, type: 'invalid_input' }]);
    expectClean(error);
    expect(await root.ok('list_ready')).toEqual({ ready: [bad] });
  });
});

describe('file-system failures', () => {
  it('reach declare_plan as internal, without a path or errno code, and declare nothing', async () => {
    const { root, runId } = await startRun();
    // A plain file where the run's plan folder belongs: mkdir fails for real.
    const plans = path.join(env.dataDir, 'runs', runId, 'plans');
    fs.mkdirSync(path.dirname(plans), { recursive: true });
    fs.writeFileSync(plans, 'in the way');
    const error = await root.fail('declare_plan', { tasks: [task('a')] });
    expect(error).toMatchObject({ code: 'internal', retryable: true });
    expectClean(error);
    expect((await root.fail('list_ready')).code).toBe('no_active_plan');
    fs.rmSync(plans);
    await root.ok('declare_plan', { tasks: [task('a')] });
  });

  it('reach spawn_agent as internal at once, and the task can be spawned once the disk is fixed', async () => {
    const { root, runId, rootId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
    const first = await spawn(root, runId, 'a');
    const blocker = path.join(first.launch.workspace_path, 'artifacts', 'b');
    fs.writeFileSync(blocker, 'in the way');
    const error = await root.fail('spawn_agent', { task_id: 'b' });
    expect(error).toMatchObject({ code: 'internal', retryable: true });
    expect(await failedSpawnSteps(runId, rootId)).toEqual([{ attempt: 1, nonRetryable: true, type: 'internal' }]);
    expectClean(error);
    fs.rmSync(blocker);
    const second = await spawn(root, runId, 'b');
    expect(second.launch.artifacts_path).toBe(blocker);
  });
});

describe('the operator API', () => {
  it('reads only runs whose id Dipper could have minted', async () => {
    for (const bad of ['..', 'run_..', 'run_%2e%2e', 'run_0123456789ab0']) {
      expect((await operator.request('GET', `/runs/${bad}/events`)).status).toBe(404);
    }
  });
});
