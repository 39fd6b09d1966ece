import type { BenchRun } from '../client';
import { expectEqual, sequential, type BenchContext } from '../measure';

/**
 * list_peers scope all in a run of `agents` agents: one Query on the run
 * workflow whose answer grows with the run. Building a large run is timed
 * too, as create_team calls of up to 100 members.
 */
export async function listPeersScenario(ctx: BenchContext, agents: number): Promise<BenchRun> {
  const n = agents.toLocaleString('en-US');
  const teams = agents > 101 ? ctx.row(`create_team, 100 members (building the ${n}-agent run)`, ['noop', 'update']) : undefined;
  const row = ctx.row(`list_peers all, ${n} agents`, ['noop', 'query']);
  const run = await ctx.agents.startRun(agents, (ms) => teams?.samples.push(ms));
  const { root } = run;
  await sequential(row, ctx.counts.warmup, ctx.counts.peers, async () => {
    const out = await root.call<{ peers: unknown[] }>('list_peers', { scope: 'all' });
    expectEqual('peers listed', out.peers.length, agents);
  });
  return run;
}
