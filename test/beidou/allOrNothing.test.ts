import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { closeAll, startRun, task } from '../support/team';

/**
 * spawn_agent and create_team either complete or leave no trace, and the
 * same call sent again (a retry after a lost answer) gets the first answer,
 * never a second agent or team.
 */
const roles = [
  { role: 'frontend', skill: 'worker', description: 'Build the page.' },
  { role: 'backend', skill: 'worker', description: 'Build the API.' },
  { role: 'docs', skill: 'worker', description: 'Write the docs.' },
];
const children = async (leader: AgentClient) => (await leader.ok('list_peers', { scope: 'children' })).peers.map((p: { agent_id: string }) => p.agent_id).sort();

describe('a call sent again', () => {
  afterAll(closeAll);

  it('spawn_agent: the spec\'s own rule, one agent (the task is no longer pending)', async () => {
    const { root } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const first = await root.ok('spawn_agent', { task_id: 'a' });
    expect(await root.fail('spawn_agent', { task_id: 'a' })).toMatchObject({ code: 'task_not_pending', status: 'in_flight', agent_id: first.agent_id });
    expect(await children(root)).toEqual([first.agent_id]);
  });

  it('create_team: the same team, its members once; a different call makes another', async () => {
    const { root } = await startRun();
    const input = { name: 'app', task: 'Coordinate the app.', roles };
    const first = await root.ok('create_team', input);
    expect(await root.ok('create_team', input)).toEqual(first);
    expect(await children(root)).toEqual(first.members.map((m: { agent_id: string }) => m.agent_id).sort());
    const second = await root.ok('create_team', { ...input, name: 'app-2' });
    expect(second.team_id).not.toBe(first.team_id);
    expect(await children(root)).toHaveLength(6);
  });
});

describe('a team whose members cannot all start', () => {
  let stack: Stack;
  const clients: AgentClient[] = [];
  beforeAll(async () => {
    // The first member starts; the server refuses the others' starts for real (the fault gives them a workflow id
    // that is already running: the leader's own).
    stack = await startStack('atomic', 28845, { DIPPER_FAULTS: 'memberStart>1' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await stack?.stop();
  });

  it('is taken back whole: the started member ends, nothing is left in the directory or the leader\'s records', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Build.' })).json;
    const root = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
    clients.push(root);
    const refused = await root.fail('create_team', { name: 'app', task: 'Coordinate.', roles });
    expect(refused.code).toBe('unavailable');
    expect(await children(root)).toEqual([]);
    const { peers } = await root.ok('list_peers', { scope: 'all' });
    expect(peers.map((p: { agent_id: string; is_leader_of: string[] }) => [p.agent_id, p.is_leader_of])).toEqual([[run.root.agent_id, []]]);

    const [rolledBack] = await eventually(async () => {
      const events = await stack.operator.events(run.run_id, 'team_rolled_back');
      return events.length > 0 ? events : undefined;
    });
    expect(rolledBack.data.agent_ids).toHaveLength(1);
    const started = rolledBack.data.agent_ids[0];
    // The one member that started has ended, as an agent whose leader ended does.
    const completed = await eventually(async () => (await stack.operator.events(run.run_id, 'agent_completed')).find((e: { agent_id: string }) => e.agent_id === started));
    expect(completed.data).toMatchObject({ stop_reason: 'cancelled', leader_terminated: true });
  }, 60_000);

  it('answers a spawn_agent whose member the server refuses with the leader\'s refusal, and the task is ready again', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Build.' })).json;
    const root = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
    clients.push(root);
    await root.ok('declare_plan', { tasks: ['a', 'b'].map((id) => ({ id, role: id, skill: 'worker', task: `Do ${id}.` })) });
    const first = await root.ok('spawn_agent', { task_id: 'a' });
    // The team's second member is past the fault's first one: its start is refused, and the step says nothing ran.
    expect(await root.fail('spawn_agent', { task_id: 'b' })).toMatchObject({ code: 'unavailable' });
    expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });
    expect(await children(root)).toEqual([first.agent_id]);
  }, 60_000);
});
