import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Operator } from '../test/support/clients';

/**
 * An agent as a runtime sees it: the official MCP client over Streamable
 * HTTP with its bearer token, on either surface, so the no-op floor and the
 * beidou calls pay for exactly the same client.
 */
export class BenchAgent {
  private constructor(
    readonly agentId: string,
    private readonly mcp: Client,
  ) {}

  static async connect(gatewayUrl: string, surface: 'beidou' | 'agentteam' | 'bench', agentId: string, token: string): Promise<BenchAgent> {
    const mcp = new Client({ name: 'dipper-bench', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/${surface}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await mcp.connect(transport);
    return new BenchAgent(agentId, mcp);
  }

  /** The tool's structured result; a tool error is thrown, so the caller counts it as a failed call. */
  async call<T = unknown>(name: string, args: Record<string, unknown> = {}): Promise<T> {
    const res = (await this.mcp.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: unknown;
      content: { type: string; text?: string }[];
    };
    if (res.isError) throw new Error(`${name}: ${res.content.find((c) => c.type === 'text')?.text ?? 'error'}`);
    return res.structuredContent as T;
  }

  async close(): Promise<void> {
    await this.mcp.close().catch(() => undefined);
  }
}

export interface BenchRun {
  runId: string;
  root: BenchAgent;
  rootToken: string;
  /** Every agent of the run but the root. */
  memberIds: string[];
}

/** What scenarios need of the stack: the gateway, the operator API, and the agents they open (closed by closeAll). */
export class Agents {
  private readonly open: BenchAgent[] = [];
  readonly operator: Operator;

  constructor(
    readonly gatewayUrl: string,
    operatorToken: string,
  ) {
    this.operator = new Operator({ gatewayUrl, operatorToken });
  }

  async connect(surface: 'beidou' | 'agentteam' | 'bench', agentId: string, token: string): Promise<BenchAgent> {
    const agent = await BenchAgent.connect(this.gatewayUrl, surface, agentId, token);
    this.open.push(agent);
    return agent;
  }

  /**
   * A run of `agents` agents: the root plus members from create_team calls
   * of at most 100 each, waited for until the run's directory lists them all.
   */
  async startRun(agents: number, onTeam?: (ms: number) => void): Promise<BenchRun> {
    // The watchdog's idle pass off: these agents are idle by design, and the figures are of calls, not of nudges.
    const res = await this.operator.request('POST', '/runs', { task: `Benchmark run of ${agents} agents.`, limits: { idle_watchdog_seconds: 0 } });
    if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
    const runId: string = res.json.run_id;
    const root = await this.connect('beidou', res.json.root.agent_id, res.json.root.agent_token);
    const memberIds: string[] = [];
    for (let team = 0; memberIds.length < agents - 1; team++) {
      const size = Math.min(100, agents - 1 - memberIds.length);
      const roles = Array.from({ length: size }, (_, i) => ({
        role: `worker-${team}-${i}`,
        skill: 'worker',
        description: `Member ${i} of team ${team}.`,
      }));
      const started = performance.now();
      const out = await root.call<{ members: { agent_id: string }[] }>('create_team', { name: `team-${team}`, task: 'Benchmark team.', roles });
      onTeam?.(performance.now() - started);
      memberIds.push(...out.members.map((m) => m.agent_id));
    }
    await this.untilListed(runId, agents);
    await this.untilStarted(runId, agents);
    return { runId, root, rootToken: res.json.root.agent_token, memberIds };
  }

  /**
   * Members answer create_team before their own first workflow task has run: until every one has (its
   * agent_started event), their start-up would load whatever the scenario measures next.
   */
  private async untilStarted(runId: string, agents: number): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const res = await this.operator.request('GET', `/runs/${runId}/events?type=agent_started&limit=10000`);
      const started = res.status === 200 ? (res.json.events as unknown[]).length : 0;
      if (started >= agents) return;
      if (Date.now() > deadline) throw new Error(`run ${runId} has ${started} agents started, not ${agents}, after 120 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** The directory hears of members by signal, a little after create_team returns. */
  private async untilListed(runId: string, agents: number): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const res = await this.operator.request('GET', `/runs/${runId}`);
      if (res.status === 200 && res.json.agent_count >= agents) return;
      if (Date.now() > deadline) throw new Error(`run ${runId} lists ${res.json?.agent_count} agents, not ${agents}, after 120 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((a) => a.close()));
  }
}
