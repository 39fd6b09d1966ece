import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
beforeAll(async () => {
  // Nothing listens on port 9 of this machine: every launch fails.
  const runtimes = { default: { kind: 'none' }, skills: { worker: { kind: 'webhook', url: 'http://127.0.0.1:9/runtime' } } };
  stack = await startStack('launchfail', 28770, { DIPPER_RUNTIMES: JSON.stringify(runtimes) });
});
afterAll(async () => stack?.stop());

describe('a runtime that cannot be launched', () => {
  it('is an event and a crash, never a failed workflow: resume, fresh, then the leader is told', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'x' })).json;
    const root = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
    try {
      await root.ok('declare_plan', { tasks: [{ id: 'a', role: 'dev', skill: 'worker', task: 'Do a.' }] });
      const child = await root.ok('spawn_agent', { task_id: 'a' });
      const notice = await eventually(async () => {
        const inbox = await root.inbox(0, 0);
        return inbox.messages.find((m) => m.kind === 'system' && m.content.startsWith('[AGENT CRASHED]'));
      }, 60_000);
      expect(notice.content).toContain(child.agent_id);

      const events: any[] = await eventually(async () => {
        const all = (await stack.operator.request('GET', `/runs/${run.run_id}/events?limit=5000`)).json.events as any[];
        return all.some((e) => e.type === 'agent_completed' && e.agent_id === child.agent_id) ? all : undefined;
      });
      const of = (type: string) => events.filter((e) => e.type === type && e.agent_id === child.agent_id);
      expect(of('agent_error').map((e) => [e.data.stage, e.data.mode])).toEqual([
        ['launch', 'first'],
        ['launch', 'resume'],
        ['launch', 'fresh'],
      ]);
      expect(of('agent_error')[0].data.message).not.toMatch(/\bat .+:\d+/);
      expect(of('agent_crashed').map((e) => e.data.crashes)).toEqual([1, 2, 3]);
      expect(of('agent_completed').map((e) => e.data.stop_reason)).toEqual(['crash_escalated']);
      // The agent's workflow is alive: its leader can still end it.
      expect(await root.ok('terminate_child', { agent_id: child.agent_id, force: true })).toEqual({ sentinel_posted: true });
    } finally {
      await root.close();
    }
  }, 90_000);
});
