import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { closeAll, env, eventsOf, operator, spawn, startRun, task } from '../support/team';
import { projectRoot } from '../support/processes';

afterAll(closeAll);

describe('the operator API', () => {
  it('validates run requests and names the field', async () => {
    expect(await operator.request('POST', '/runs', { task: '' })).toMatchObject({ status: 400, json: { error: { code: 'invalid_input', field: 'task' } } });
    expect(await operator.request('POST', '/runs', { task: 'x', owner: 'me' })).toMatchObject({ status: 400, json: { error: { field: 'owner' } } });
    expect(await operator.request('POST', '/runs', { task: 'x', root_skill: 'nope' })).toMatchObject({ status: 400, json: { error: { code: 'unknown_skill' } } });
    expect((await operator.request('GET', '/runs/run_000000000000')).status).toBe(404);
    expect((await operator.request('GET', '/runs/not-a-run')).status).toBe(404);
  });

  it('lists a run, its agents, and its events as JSON and as a JSONL export', async () => {
    const { root, runId, rootId } = await startRun(undefined, 'Export me.');
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    await eventsOf(runId, 'agent_spawned', 2);

    const run = await operator.request('GET', `/runs/${runId}`);
    expect(run.json).toMatchObject({ run_id: runId, status: 'active', task: 'Export me.', root_agent_id: rootId, agent_count: 2 });
    const agents = await operator.request('GET', `/runs/${runId}/agents`);
    expect(agents.json.agents.map((a: any) => a.agent_id).sort()).toEqual([rootId, child.agentId].sort());
    // The tree: each row names its leader and depth, and how many items wait in its inbox.
    await root.ok('send_message', { to: child.agentId, content: 'one' });
    await root.ok('send_message', { to: child.agentId, content: 'two' });
    const rows = (await operator.request('GET', `/runs/${runId}/agents`)).json.agents;
    expect(rows.find((a: any) => a.agent_id === child.agentId)).toMatchObject({ leader_id: rootId, depth: 1, status: 'active', inbox_depth: 2 });
    expect(rows.find((a: any) => a.agent_id === rootId)).toMatchObject({ leader_id: null, depth: 0 });

    const json = (await operator.request('GET', `/runs/${runId}/events`)).json;
    // Same window as the JSON read: more events may be written meanwhile.
    const jsonl = await operator.request('GET', `/runs/${runId}/events?format=jsonl&limit=${json.events.length}`);
    const lines = (jsonl.json as string).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((e) => e.event_id)).toEqual(json.events.map((e: any) => e.event_id));
    expect(lines.map((e) => e.type)).toEqual(expect.arrayContaining(['run_started', 'plan_declared', 'team_created', 'agent_spawned']));
    expect(new Set(lines.map((e) => e.run_id))).toEqual(new Set([runId]));
    // Pages follow the cursor.
    const page = (await operator.request('GET', `/runs/${runId}/events?after=${json.events[0].seq}&limit=1`)).json;
    expect(page.events.map((e: any) => e.seq)).toEqual([json.events[1].seq]);
  });

  it('makes a run findable with temporal workflow list --query on the search attributes', async () => {
    const { root, runId, rootId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    const temporal = path.join(projectRoot, '.tools', 'venv', 'bin', 'temporal');
    const list = (query: string) =>
      JSON.parse(
        execFileSync(temporal, ['workflow', 'list', '--address', env.temporalAddress, '--namespace', env.namespace, '--query', query, '-o', 'json'], {
          encoding: 'utf8',
        }) || '[]',
      ).map((w: any) => w.execution.workflowId);
    expect(list(`DipperRunId = "${runId}"`).sort()).toEqual([`run/${runId}`, `run/${runId}/agent/${rootId}`, `run/${runId}/agent/${child.agentId}`].sort());
    expect(list(`DipperLeaderId = "${rootId}"`)).toEqual([`run/${runId}/agent/${child.agentId}`]);
    expect(list(`DipperRunId = "${runId}" AND DipperRole = "a-engineer"`)).toEqual([`run/${runId}/agent/${child.agentId}`]);
  });
});
