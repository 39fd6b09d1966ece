import { sequential, type BenchContext } from '../measure';

/** send_message from one agent to one other, one call after another: the recipient never sees two at once. */
export async function sendMessageScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('send_message, 1 → 1, sequential', ['noop', 'update']);
  const { root, memberIds } = await ctx.agents.startRun(2);
  await sequential(row, ctx.counts.warmup, ctx.counts.send, (i) =>
    root.call('send_message', { to: memberIds[0], content: `Benchmark message ${i}.` }),
  );
}

/** The same with a 16 KiB body, which the gateway writes to the content store before the Update (the workflow holds a reference). */
export async function sendLongMessageScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('send_message, 16 KiB body (content store)', ['noop', 'update']);
  const { root, memberIds } = await ctx.agents.startRun(2);
  await sequential(row, ctx.counts.warmup, ctx.counts.send, (i) =>
    root.call('send_message', { to: memberIds[0], content: `Benchmark message ${i}. `.padEnd(16 * 1024, 'x') }),
  );
}
