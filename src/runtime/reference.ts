import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fs from 'node:fs';
import path from 'node:path';
import type { LaunchPayload } from '../common/launchPayload';
import type { InboxItem } from './inboxItem';
import { backoffMs, MAX_RETRIES, pause, runtimeRequest } from './retry';
import { scriptOf, type Script } from './script';

/**
 * Dipper's reference runtime: a real agent process without a model. It
 * reads its launch payload, speaks MCP through the official client, reads
 * its inbox through the runtime endpoint (acknowledging only what it has
 * handled), and follows the script in its task text (see script.ts).
 */

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** The error object of a refused tool call (`{"error": {...}}`), if its text is one. */
function parseError(text: string): { retryable?: boolean; retry_after_ms?: number } | undefined {
  try {
    return (JSON.parse(text) as { error?: { retryable?: boolean; retry_after_ms?: number } }).error;
  } catch {
    return undefined;
  }
}

class Agent {
  private cursor = 0;
  private readonly mcp = new Client({ name: 'dipper-reference-runtime', version: '0.1.0' });

  constructor(readonly payload: LaunchPayload) {}

  async connect(): Promise<void> {
    const transport = new StreamableHTTPClientTransport(new URL(this.payload.mcp_url), {
      requestInit: { headers: { Authorization: `Bearer ${this.payload.token}` } },
    });
    await this.mcp.connect(transport);
  }

  /**
   * One tool call. A refusal Dipper marks retryable (`unavailable` during an
   * outage, `rate_limited`) is tried again after the wait it suggests; any
   * other refusal is the script's to see.
   */
  async call<T = Record<string, unknown>>(name: string, args: Record<string, unknown> = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const res = (await this.mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: unknown; content: { text?: string }[] };
      if (!res.isError) return res.structuredContent as T;
      const text = res.content[0]?.text ?? 'failed';
      const error = parseError(text);
      if (!error?.retryable || attempt >= MAX_RETRIES) throw new Error(`${name}: ${text}`);
      await pause(error.retry_after_ms ?? backoffMs(attempt));
    }
  }

  private http<T>(method: string, url: string, body?: unknown): Promise<T> {
    return runtimeRequest<T>(this.payload.token, method, url, body);
  }

  /** The next batch of inbox items after the cursor; status 'terminated' means the run or agent ended. */
  async next(): Promise<{ items: InboxItem[]; status: string }> {
    const view = await this.http<{ messages: InboxItem[]; status: string }>(
      'GET',
      `${this.payload.inbox_url}?cursor=${this.cursor}&wait_ms=20000`,
    );
    return { items: view.messages, status: view.status };
  }

  async ack(item: InboxItem): Promise<void> {
    await this.http('POST', `${this.payload.inbox_url}/ack`, { up_to: item.seq });
    this.cursor = item.seq;
  }
}

async function work(agent: Agent, round: number): Promise<void> {
  const dir = agent.payload.artifacts_path ?? agent.payload.workspace_path;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'result.txt'), `${agent.payload.name} round ${round}\n`);
  await agent.call('signal_review', { detail: `[REVIEW REQUIRED] ${agent.payload.name} wrote result.txt (round ${round})` });
}

/** A call the review gate refused (a child's review waits): the lead answers reviews first, then tries again. */
const gated = (err: unknown) => err instanceof Error && err.message.includes('"review_gate_denied"');

async function lead(agent: Agent, script: Script): Promise<void> {
  // After a restart a child's report may already wait: the plan was declared before it, so the refusal is fine.
  await agent.call('declare_plan', { tasks: script.tasks }).catch((err: unknown) => {
    if (!gated(err)) throw err;
  });
  const approved = new Set<string>();
  const reworked = new Set<string>();
  const spawnReady = async () => {
    try {
      const { ready } = await agent.call<{ ready: string[] }>('list_ready');
      for (const taskId of ready) await agent.call('spawn_agent', { task_id: taskId });
    } catch (err) {
      // Another child's report arrived meanwhile; spawning resumes once it is approved.
      if (!gated(err)) throw err;
    }
  };
  await spawnReady();
  for (;;) {
    const { items, status } = await agent.next();
    if (status === 'terminated' && items.length === 0) return;
    for (const item of items) {
      if (item.kind === 'terminate') {
        await agent.ack(item);
        return;
      }
      // Its own report sent back (a leader's message, or the person's rework of a root's report): done again, reported again.
      const reworkOfMine = item.kind === 'message' || (item.kind === 'system' && /rework/i.test(item.content));
      if (reworkOfMine && approved.size === script.tasks.length) {
        await agent.call('signal_review', { detail: `[REVIEW REQUIRED] ${agent.payload.name}: all ${approved.size} tasks approved, looked at again as asked` });
      }
      if (item.kind === 'review_report' && item.from && !approved.has(item.from)) {
        if (script.rework_first && !reworked.has(item.from)) {
          reworked.add(item.from);
          await agent.call('send_message', { to: item.from, content: 'Rework: please run it once more.' });
        } else {
          await agent.call('terminate_child', { agent_id: item.from });
          approved.add(item.from);
          await spawnReady();
          if (approved.size === script.tasks.length) {
            await agent.call('signal_review', { detail: `[REVIEW REQUIRED] ${agent.payload.name}: all ${approved.size} tasks approved` });
            await agent.call('request_termination', { detail: 'plan complete' });
          }
        }
      }
      await agent.ack(item);
    }
  }
}

async function follow(agent: Agent): Promise<void> {
  let round = 1;
  await work(agent, round);
  for (;;) {
    const { items, status } = await agent.next();
    if (status === 'terminated' && items.length === 0) return;
    for (const item of items) {
      await agent.ack(item);
      if (item.kind === 'terminate') return;
      if (item.kind === 'message') await work(agent, ++round);
    }
  }
}

/** The launch payload comes on stdin, and only there (docs/runtime-protocol.md). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<void> {
  const payload = JSON.parse(await readStdin()) as LaunchPayload;
  const agent = new Agent(payload);
  await agent.connect();
  log(`${payload.name} started (${payload.mode})`);
  const script = scriptOf(payload.first_message);
  if (script) await lead(agent, script);
  else await follow(agent);
  log(`${payload.name} finished`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
