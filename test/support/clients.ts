export { AgentClient, type ToolOutcome } from '../../src/client/agent';
import type { TestEnv } from '../setup/env';

/** The operator API, with the operator token. */
export class Operator {
  constructor(readonly env: Pick<TestEnv, 'gatewayUrl' | 'operatorToken'>) {}

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${this.env.gatewayUrl}/api${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.env.operatorToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text && res.headers.get('content-type')?.includes('application/json') ? JSON.parse(text) : text };
  }

  async startRun(task = 'Build the thing.'): Promise<{ run_id: string; root: { agent_id: string; agent_token: string } }> {
    const res = await this.request('POST', '/runs', { task });
    if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  }

  /** The launch payload of an agent whose runtime is `none`: the test plays that agent. */
  async launch(runId: string, agentId: string): Promise<any> {
    const res = await this.request('GET', `/runs/${runId}/agents/${agentId}/launch`);
    if (res.status !== 200) throw new Error(`launch: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  }

  async events(runId: string, type?: string): Promise<any[]> {
    const res = await this.request('GET', `/runs/${runId}/events${type ? `?type=${encodeURIComponent(type)}` : ''}`);
    return res.json.events;
  }
}

/** Polls until check returns a value that is not undefined; events and directory updates are asynchronous. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
