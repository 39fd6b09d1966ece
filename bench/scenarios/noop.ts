import { expectEqual, sequential, type BenchContext } from '../measure';

/** Floor (a): the gateway alone. The same token check, JSON parsing and per-request MCP server as beidou, no Temporal. */
export async function noopScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('no-op tool (`/mcp/bench`)', [], 'noop');
  const run = await ctx.agents.startRun(1);
  const agent = await ctx.agents.connect('bench', run.root.agentId, run.rootToken);
  await sequential(row, ctx.counts.warmup, ctx.counts.noop, async () => {
    const out = await agent.call<{ ok: boolean }>('noop');
    expectEqual('noop', out.ok, true);
  });
}
