import type { BenchRun } from '../client';
import { runWorkflowId } from '../../workflows/ids';
import { peersQuery } from '../../workflows/run/messages';
import { expectEqual, sequential, type BenchContext } from '../measure';

/**
 * list_peers scope all in a run of `agents` agents: one Query on the run
 * workflow whose answer grows with the run. Building a large run is timed
 * too, as create_team calls of up to 100 members. In the large run each
 * list_peers call is followed by a no-op call answering as many bytes in
 * as many rows (noop_bytes), so the two are measured side by side and the
 * list's cost can be read against what its size alone costs. Then the
 * same Query straight from this process (no MCP, no gateway): what of the
 * list's time is the workflow's answer and its trip through Temporal.
 */
export async function listPeersScenario(ctx: BenchContext, agents: number): Promise<BenchRun> {
  const n = agents.toLocaleString('en-US');
  const large = agents > 101;
  const teams = large ? ctx.row(`create_team, 100 members (building the ${n}-agent run)`, ['noop', 'update', 'children']) : undefined;
  const row = ctx.row(`list_peers all, ${n} agents`, [large ? 'noopBytes' : 'noop', 'query']);
  const run = await ctx.agents.startRun(agents, (ms) => teams?.samples.push(ms));
  const { root } = run;
  const list = async () => {
    const out = await root.call<{ peers: unknown[] }>('list_peers', { scope: 'all' });
    expectEqual('peers listed', out.peers.length, agents);
    return out;
  };
  if (!large) {
    await sequential(row, ctx.counts.warmup, ctx.counts.peers, list);
    return run;
  }
  const bytes = JSON.stringify(await list()).length;
  const same = ctx.row(`no-op tool, same bytes as list_peers over ${n} agents (${(bytes / 1024).toFixed(0)} KiB in ${n} rows)`, [], 'noopBytes');
  const direct = ctx.row(`list_peers' Query over ${n} agents, straight from this process (no MCP)`, ['query']);
  const noop = await ctx.agents.connect('bench', root.agentId, run.rootToken);
  for (let i = 0; i < ctx.counts.warmup + ctx.counts.peers; i++) {
    const keep = i >= ctx.counts.warmup;
    await row.time(list, keep);
    await same.time(async () => {
      const out = await noop.call<{ rows: string[] }>('noop_bytes', { bytes, rows: agents });
      expectEqual('rows', out.rows.length, agents);
    }, keep);
  }
  const handle = ctx.temporal.handle(runWorkflowId(run.runId));
  await sequential(direct, ctx.counts.warmup, ctx.counts.peers, async () => {
    expectEqual('peers queried', (await handle.query(peersQuery, { caller_id: root.agentId, scope: 'all' })).length, agents);
  });
  return run;
}
