import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyAgentToken } from '../../src/auth/tokens';
import { readTestEnv } from '../setup/env';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
let hook: http.Server;
const received: any[] = [];
/** A launch this test answers itself (when it returns true), later than at once. */
let answerLaunch: ((payload: any, res: http.ServerResponse) => boolean) | undefined;

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const payload = JSON.parse(body);
      received.push(payload);
      if (!answerLaunch?.(payload, res)) res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/runtime`;
  stack = await startStack('webhook', 28760, { DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'webhook', url } }) });
});
afterAll(async () => {
  await stack?.stop();
  await new Promise((r) => hook.close(r));
});

describe('the webhook runtime', () => {
  it('POSTs the launch payload to start an agent elsewhere, and a stop request when it ends', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Runs elsewhere.', root_skill: 'worker' })).json;
    const launch = await eventually(async () => received.find((r) => r.action === 'launch' && r.agent_id === run.root.agent_id));
    expect(launch).toMatchObject({
      run_id: run.run_id,
      first_message: expect.stringMatching(/^Runs elsewhere\.\n\n\[SKILLS\]\n/),
      mcp_url: `${stack.gatewayUrl}/mcp/beidou`,
      inbox_url: `${stack.gatewayUrl}/api/runtime/inbox`,
      mode: 'first',
    });
    expect(launch.skill_body).toContain('member of a team');
    // It carries this agent's own credentials and nothing of Dipper's: exactly the documented fields, one token, its own.
    expect(Object.keys(launch).sort()).toEqual(
      ['action', 'agent_id', 'artifacts_path', 'first_message', 'inbox_url', 'isphere_mcp_url', 'mcp_url', 'mode', 'model', 'name', 'role', 'rules', 'run_id', 'skill', 'skill_body', 'skills', 'task_mcp_url', 'token', 'workspace_path'].sort(),
    );
    expect(verifyAgentToken([readTestEnv().tokenSecret], launch.token)).toMatchObject({ run_id: run.run_id, agent_id: run.root.agent_id, gen: 1 });
    const text = JSON.stringify(launch);
    for (const secret of [readTestEnv().tokenSecret, readTestEnv().operatorToken]) expect(text).not.toContain(secret);
    expect(text.match(/dpa_/g)).toHaveLength(1);

    // The remote runtime works with the token it was given.
    const agent = await AgentClient.connect(stack.gatewayUrl, launch.token);
    await agent.ok('request_termination', { detail: 'done remotely' });
    await stack.operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'termination', verdict: 'approve' });
    const stop = await eventually(async () => received.find((r) => r.action === 'stop'));
    expect(stop).toEqual({ action: 'stop', run_id: run.run_id, agent_id: run.root.agent_id });
    await agent.close();
  });

  it("takes spawn_agent from the runtime it is launching while the launch's request is still open", async () => {
    // A runtime may start its agent before it answers the launch; the agent's first calls must not wait for that
    // answer (the launch waits up to 15 s for it, three times). Spawns are started by a loop of their own.
    const outcome = new Promise<{ spawned: any; openAfterSpawn: boolean }>((resolve, reject) => {
      answerLaunch = (payload, res) => {
        if (payload.action !== 'launch' || !String(payload.first_message).startsWith('Spawns while launching.')) return false;
        let open = true;
        res.on('close', () => (open = false));
        void (async () => {
          const agent = await AgentClient.connect(stack.gatewayUrl, payload.token);
          try {
            await agent.ok('declare_plan', { tasks: [{ id: 'a', role: 'helper', skill: 'worker', task: 'Help.', depends_on: [] }] });
            const spawned = await agent.ok('spawn_agent', { task_id: 'a' });
            resolve({ spawned, openAfterSpawn: open });
          } finally {
            await agent.close();
            res.writeHead(204).end();
          }
        })().catch(reject);
        return true;
      };
    });
    const run = (await stack.operator.request('POST', '/runs', { task: 'Spawns while launching.', root_skill: 'worker' })).json;
    const { spawned, openAfterSpawn } = await outcome;
    expect(openAfterSpawn).toBe(true);
    expect(spawned).toMatchObject({ agent_id: expect.stringMatching(/^ag_/), task_id: 'a', team_created: true });
    // And the member it started is launched in turn.
    await eventually(async () => received.find((r) => r.action === 'launch' && r.agent_id === spawned.agent_id));
    await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'done' });
  });
});
