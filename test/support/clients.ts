import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestEnv } from '../setup/env';

export interface ToolOutcome {
  isError: boolean;
  data: any;
  error: { code: string; message: string; [k: string]: unknown } | undefined;
  text: string;
}

/** An agent as a runtime sees it: the official MCP client over Streamable HTTP with its bearer token. */
export class AgentClient {
  private constructor(
    readonly mcp: Client,
    readonly token: string,
    readonly gatewayUrl: string,
  ) {}

  static async connect(gatewayUrl: string, token: string): Promise<AgentClient> {
    const mcp = new Client({ name: 'dipper-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/beidou`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await mcp.connect(transport);
    return new AgentClient(mcp, token, gatewayUrl);
  }

  async call(name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
    const res = (await this.mcp.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: any;
      content: { type: string; text?: string }[];
    };
    const text = res.content.find((c) => c.type === 'text')?.text ?? '';
    const isError = res.isError === true;
    const error = isError ? (JSON.parse(text) as { error: ToolOutcome['error'] }).error : undefined;
    return { isError, data: isError ? undefined : res.structuredContent, error, text };
  }

  /** Calls a tool that must succeed and returns its structured result. */
  async ok(name: string, args: Record<string, unknown> = {}): Promise<any> {
    const out = await this.call(name, args);
    if (out.isError) throw new Error(`${name} failed: ${out.text}`);
    return out.data;
  }

  /** Calls a tool that must fail and returns its error object. */
  async fail(name: string, args: Record<string, unknown> = {}): Promise<NonNullable<ToolOutcome['error']>> {
    const out = await this.call(name, args);
    if (!out.isError || !out.error) throw new Error(`${name} was expected to fail but returned ${out.text}`);
    return out.error;
  }

  async inbox(cursor = 0, waitMs = 0): Promise<{ messages: any[]; next_cursor: number; status: string }> {
    const res = await fetch(`${this.gatewayUrl}/api/runtime/inbox?cursor=${cursor}&wait_ms=${waitMs}`, {
      headers: { Authorization: `Bearer ${this.token}` },
    });
    if (!res.ok) throw new Error(`inbox ${res.status}: ${await res.text()}`);
    return (await res.json()) as { messages: any[]; next_cursor: number; status: string };
  }

  async ack(upTo: number): Promise<{ acked_through: number }> {
    const res = await fetch(`${this.gatewayUrl}/api/runtime/inbox/ack`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ up_to: upTo }),
    });
    if (!res.ok) throw new Error(`ack ${res.status}: ${await res.text()}`);
    return (await res.json()) as { acked_through: number };
  }

  async close(): Promise<void> {
    await this.mcp.close();
  }
}

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
