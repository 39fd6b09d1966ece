import { randomUUID } from 'node:crypto';
import { echoUpdate, echoWorkflow, stopSignal } from '../../workflows/bench/echoWorkflow';
import { expectEqual, sequential, type BenchContext } from '../measure';

/** Floor (b): one Update on a workflow with nothing to do, through src/temporal's typed operations (a thin layer over @temporalio/client). */
export async function temporalUpdateScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('bare Temporal Update', [], 'update');
  const handle = await ctx.temporal.start(echoWorkflow, { taskQueue: ctx.taskQueue, workflowId: `bench-echo-${randomUUID()}` });
  try {
    await sequential(row, ctx.counts.warmup, ctx.counts.update, async (i) => {
      expectEqual('echo', await handle.update(echoUpdate, [i]), i);
    });
  } finally {
    await handle.signal(stopSignal);
  }
}
