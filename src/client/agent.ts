/* eslint-disable @typescript-eslint/no-explicit-any -- tool results are JSON whose shape each tool defines; callers (tests, the soak) read the fields they know. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface ToolOutcome {
  isError: boolean;
  /** The structured result; on an error only where the surface sends one (isphere: the error envelope). */
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

  /** `surface`: beidou (team orchestration), agentteam (the task board) or isphere (iSphere messaging); the same token reaches all three. */
  static async connect(gatewayUrl: string, token: string, surface: 'beidou' | 'agentteam' | 'isphere' = 'beidou'): Promise<AgentClient> {
    const mcp = new Client({ name: 'dipper-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/${surface}`), {
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
    // An isphere refusal carries its envelope (with its audit) as structured content too.
    return { isError, data: res.structuredContent, error, text };
  }

  /** Calls a tool that must succeed and returns its structured result. */
  async ok(name: string, args: Record<string, unknown> = {}): Promise<any> {
    const out = await this.call(name, args);
    if (out.isError) throw new Error(`${name} failed: ${out.text}`);
    return out.data;
  }

  /**
   * Calls a tool that must succeed, as a careful runtime does on a busy machine: a refusal Dipper marks retryable
   * (`unavailable`; `outcome_unknown` of a keyed call) is made again after the pause it asks for, for up to `withinMs`.
   * Only a call that is safe to repeat should come here (give send_message an idempotency_key).
   */
  async persist(name: string, args: Record<string, unknown> = {}, withinMs = 60_000): Promise<any> {
    const until = Date.now() + withinMs;
    for (;;) {
      const out = await this.call(name, args);
      if (!out.isError) return out.data;
      const retryable = out.error?.retryable === true;
      if (!retryable || Date.now() > until) throw new Error(`${name} failed: ${out.text}`);
      const pause = retryAfterMs(out.error) ?? 500;
      await new Promise((r) => setTimeout(r, Math.min(Math.max(pause, 100), 5_000)));
    }
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

/** The pause a refusal asks for before a repeat (`retry_after_ms`, on the error or in its details), if it asks for one. */
export function retryAfterMs(error: ToolOutcome['error']): number | undefined {
  const details = error?.details as { retry_after_ms?: unknown } | undefined;
  const ms = Number((error as { retry_after_ms?: unknown } | undefined)?.retry_after_ms ?? details?.retry_after_ms);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
