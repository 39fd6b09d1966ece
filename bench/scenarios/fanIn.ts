import type { BenchContext } from '../measure';

const SENDERS = 50;

/**
 * Fifty agents each send one message to their leader at the same moment,
 * several times over. Each message's latency and each burst's wall time
 * are kept; the first burst is warm-up.
 */
export async function fanInScenario(ctx: BenchContext): Promise<void> {
  const perMessage = ctx.row(`fan-in ${SENDERS} → 1, each message`, ['noop', 'update']);
  const wall = ctx.row(`fan-in ${SENDERS} → 1, whole burst`, ['update']);
  const { runId, root, memberIds } = await ctx.agents.startRun(SENDERS + 1);
  const senders = await Promise.all(memberIds.map((id) => ctx.agents.member(runId, id)));
  for (let burst = 0; burst < 1 + ctx.counts.bursts; burst++) {
    const keep = burst > 0;
    await wall.time(
      () =>
        Promise.all(
          senders.map((s, i) =>
            perMessage.time(() => s.call('send_message', { to: root.agentId, content: `Report ${i} of burst ${burst}.` }), keep),
          ),
        ),
      keep,
    );
    // A short pause, so one burst's tail does not overlap the next.
    await new Promise((r) => setTimeout(r, 200));
  }
}
