import { type BenchContext } from '../measure';

/** declare_plan of three tasks, then remove_plan, one after another: each writes or retires the plan's file. */
export async function planScenario(ctx: BenchContext): Promise<void> {
  const declare = ctx.row('declare_plan, 3 tasks', ['noop', 'update']);
  const remove = ctx.row('remove_plan', ['noop', 'update']);
  const warmup = Math.max(1, Math.round(ctx.counts.warmup / 4));
  const { root } = await ctx.agents.startRun(1);
  const tasks = ['a', 'b', 'c'].map((id) => ({ id, role: `engineer-${id}`, skill: 'worker', task: `Do ${id}.` }));
  for (let i = 0; i < warmup + ctx.counts.spawn; i++) {
    await declare.time(() => root.call('declare_plan', { tasks }), i >= warmup);
    await remove.time(() => root.call('remove_plan', {}), i >= warmup);
  }
}
