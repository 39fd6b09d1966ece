import { sequential, type BenchContext } from '../measure';

/** spawn_agent for the tasks of one plan of independent tasks, one after another. */
export async function spawnAgentScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('spawn_agent, sequential', ['noop', 'update']);
  const warmup = Math.max(1, Math.round(ctx.counts.warmup / 4));
  const { root } = await ctx.agents.startRun(1);
  const ids = Array.from({ length: warmup + ctx.counts.spawn }, (_, i) => `t${i}`);
  const tasks = ids.map((id) => ({ id, role: `engineer-${id}`, skill: 'worker', task: `Do ${id}.` }));
  await root.call('declare_plan', { tasks });
  // The first spawn also creates the team and its workspace, so it falls in the warm-up.
  await sequential(row, warmup, ctx.counts.spawn, (i) => root.call('spawn_agent', { task_id: ids[i] }));
}
