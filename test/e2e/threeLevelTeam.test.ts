import fs from 'node:fs';
import path from 'node:path';
import { planBlock } from '../../src/runtime/script';
import { eventually } from '../support/clients';
import { referenceRuntime, startStack, type Stack } from '../support/stack';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('e2e', 28720, { DIPPER_RUNTIMES: JSON.stringify({ default: referenceRuntime }) });
});
afterAll(async () => stack?.stop());

const worker = (id: string, deps: string[] = []) => ({ id, role: `${id}-dev`, skill: 'worker', task: `Build ${id}.`, depends_on: deps });
const leader = (id: string, script: object, deps: string[] = []) => ({
  id,
  role: `${id}-lead`,
  skill: 'lead',
  task: `Lead ${id}.\n${planBlock(script as never)}`,
  depends_on: deps,
});

describe('a scripted three-level team on the reference runtime', () => {
  it('runs root -> leaders -> workers through a DAG, reviews and approvals to completion', async () => {
    const script = {
      tasks: [
        leader('backend', { rework_first: true, tasks: [worker('schema'), worker('api', ['schema'])] }),
        leader('frontend', { tasks: [worker('page'), worker('tests')] }, ['backend']),
      ],
    };
    const started = await stack.operator.request('POST', '/runs', { task: `Ship the product.\n${planBlock(script)}`, root_skill: 'lead' });
    expect(started.status).toBe(201);
    const runId: string = started.json.run_id;

    // The root asks its human to end the run once both leaders are approved.
    await eventually(async () => {
      const run = await stack.operator.request('GET', `/runs/${runId}`);
      return run.json.pending_root.some((r: any) => r.kind === 'termination') ? true : undefined;
    }, 120_000);
    const end = await stack.operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'termination', verdict: 'approve' });
    expect(end.json.run_status).toBe('completed');

    const events = await eventually(async () => {
      const res = await stack.operator.request('GET', `/runs/${runId}/events?limit=5000`);
      const all = res.json.events as any[];
      const completed = all.filter((e) => e.type === 'agent_completed').length;
      return all.some((e) => e.type === 'run_completed') && completed >= 7 ? all : undefined;
    }, 60_000);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect(count('agent_spawned')).toBe(7);
    // One agent_completed per agent, however its lifecycle ended.
    expect(new Set(events.filter((e) => e.type === 'agent_completed').map((e) => e.agent_id)).size).toBe(7);
    expect(count('agent_completed')).toBe(7);
    expect(count('team_created')).toBe(3);
    expect(count('task_done')).toBe(6);
    expect(count('completion.approved')).toBeGreaterThanOrEqual(7);
    // backend's lead sent each worker one rework message before approving.
    expect(count('review.acknowledged')).toBe(2);
    // frontend waited for backend: its spawn comes after backend's approval.
    const spawnOf = (role: string) => events.find((e) => e.type === 'agent_spawned' && e.data.role === role);
    const backendDone = events.find((e) => e.type === 'task_done' && e.data.task_id === 'backend');
    expect(spawnOf('frontend-lead').seq).toBeGreaterThan(backendDone.seq);

    // Each worker wrote its result into its own artifacts folder.
    const launches = events.filter((e) => e.type === 'agent_spawned' && e.data.plan_task_id && e.data.role.endsWith('-dev'));
    expect(launches).toHaveLength(4);
    const runDir = path.join(stack.env.DIPPER_DATA_DIR, 'runs', runId, 'teams');
    const results = fs
      .readdirSync(runDir)
      .flatMap((team) => fs.readdirSync(path.join(runDir, team, 'artifacts')).map((t) => path.join(runDir, team, 'artifacts', t, 'result.txt')))
      .filter((f) => fs.existsSync(f));
    expect(results).toHaveLength(4);
    expect(fs.readFileSync(results.find((f) => f.includes(`${path.sep}api${path.sep}`))!, 'utf8')).toMatch(/round 2/);

    // Every runtime process was stopped: no pid file is left behind.
    const agentsDir = path.join(stack.env.DIPPER_DATA_DIR, 'runs', runId, 'agents');
    await eventually(async () => {
      const left = fs.readdirSync(agentsDir).filter((a) => fs.existsSync(path.join(agentsDir, a, 'runtime.pid')));
      return left.length === 0 ? true : undefined;
    }, 30_000);
    expect(fs.readdirSync(agentsDir)).toHaveLength(7);
  }, 180_000);
});
