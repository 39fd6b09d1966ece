import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyAgentToken } from '../../src/auth/tokens';
import { readTestEnv } from '../setup/env';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
let hook: http.Server;
const received: any[] = [];

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(204).end();
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
});
