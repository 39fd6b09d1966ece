/* eslint-disable @typescript-eslint/no-explicit-any -- operator API JSON; callers read the fields they know. */
/** The operator API, with the operator token. */
export class Operator {
  constructor(readonly env: { gatewayUrl: string; operatorToken: string }) {}

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
