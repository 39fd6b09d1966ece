import { randomUUID } from 'node:crypto';
import { echoCountQuery, echoWorkflow, stopSignal } from '../../workflows/bench/echoWorkflow';
import { expectEqual, sequential, type BenchContext } from '../measure';

/** Floor (c): one Query on a workflow with nothing to do, through src/temporal's typed operations (a thin layer over @temporalio/client). */
export async function temporalQueryScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('bare Temporal Query', [], 'query');
  const handle = await ctx.temporal.start(echoWorkflow, { taskQueue: ctx.taskQueue, workflowId: `bench-echo-${randomUUID()}` });
  try {
    await sequential(row, ctx.counts.warmup, ctx.counts.query, async () => {
      expectEqual('echoCount', await handle.query(echoCountQuery), 0);
    });
  } finally {
    await handle.signal(stopSignal);
  }
}
