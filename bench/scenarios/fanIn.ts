import type { BenchContext, Row } from '../measure';

const SENDERS = 50;

/** Every caller makes one call at the same moment; the burst's wall time and each call's latency are kept. */
async function burst(each: Row, wall: Row, keep: boolean, calls: (() => Promise<unknown>)[]): Promise<void> {
  await wall.time(() => Promise.all(calls.map((call) => each.time(call, keep))), keep);
  // A short pause, so one burst's tail does not overlap the next.
  await new Promise((r) => setTimeout(r, 200));
}

/**
 * Fifty agents each send one message to their leader at the same moment,
 * several times over; the first burst is warm-up. Before each, the same
 * fifty callers make one no-op call each at once: what fifty concurrent
 * requests cost this machine before any Temporal work.
 */
export async function fanInScenario(ctx: BenchContext): Promise<void> {
  const perMessage = ctx.row(`fan-in ${SENDERS} → 1, each message`, ['noop', 'update']);
  const wall = ctx.row(`fan-in ${SENDERS} → 1, whole burst`, ['update']);
  const noopEach = ctx.row(`${SENDERS} no-op calls at once, each`, ['noop']);
  const noopWall = ctx.row(`${SENDERS} no-op calls at once, whole burst`, []);
  const { runId, root, memberIds } = await ctx.agents.startRun(SENDERS + 1);
  const tokens = await Promise.all(memberIds.map(async (id) => (await ctx.agents.operator.launch(runId, id)).token as string));
  const senders = await Promise.all(memberIds.map((id, i) => ctx.agents.connect('beidou', id, tokens[i])));
  const noops = await Promise.all(memberIds.map((id, i) => ctx.agents.connect('bench', id, tokens[i])));
  for (let b = 0; b < 1 + ctx.counts.bursts; b++) {
    await burst(noopEach, noopWall, b > 0, noops.map((n) => () => n.call('noop')));
    await burst(
      perMessage,
      wall,
      b > 0,
      senders.map((s, i) => () => s.call('send_message', { to: root.agentId, content: `Report ${i} of burst ${b}.` })),
    );
  }
}
