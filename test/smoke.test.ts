import { readTestEnv } from './setup/env';
import { AgentClient, Operator } from './support/clients';

const env = readTestEnv();
const operator = new Operator(env);

describe('a run', () => {
  it('starts with a root agent that sees the beidou tools and itself in list_peers all', async () => {
    const run = await operator.startRun('Write a haiku.');
    const root = await AgentClient.connect(env.gatewayUrl, run.root.agent_token);
    const { tools } = await root.mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'answer_question',
        'ask_user',
        'create_team',
        'declare_plan',
        'escalate_question',
        'list_peers',
        'list_pending_reviews',
        'list_ready',
        'remove_plan',
        'request_termination',
        'send_message',
        'signal_review',
        'spawn_agent',
        'terminate_child',
        'update_plan_task',
      ].sort(),
    );
    const peers = await root.ok('list_peers', { scope: 'all' });
    expect(peers.peers).toEqual([expect.objectContaining({ agent_id: run.root.agent_id, team_id: null, status: 'active' })]);
    await root.close();
  });
});
