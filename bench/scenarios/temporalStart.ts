import { randomUUID } from 'node:crypto';
import { echoWorkflow } from '../../workflows/bench/echoWorkflow';
import { eventMs, isType } from '../historyEvents';
import type { BenchContext } from '../measure';

const CHILDREN = 100;

/**
 * Floor (d): a workflow with nothing to do, started and waited for
 * (start, its first workflow task, which ends it, and the result), as a
 * caller that starts a short workflow and waits for it pays; and, from the
 * same workflows' histories, the time from the start call to the first
 * workflow task's completion.
 */
export async function workflowStartScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row('bare workflow start and result', [], 'start');
  const firstTask = ctx.row('bare workflow start, until its first task completed (history)', []);
  for (let i = 0; i < ctx.counts.warmup + ctx.counts.starts; i++) {
    const workflowId = `bench-start-${randomUUID()}`;
    const sentAt = performance.timeOrigin + performance.now();
    const ms = await row.time(() => ctx.temporal.execute(echoWorkflow, { taskQueue: ctx.taskQueue, workflowId, args: [{ returnAtOnce: true }] }), i >= ctx.counts.warmup);
    if (ms === undefined || i < ctx.counts.warmup) continue;
    // Read after the call was timed, so the history's fetch is in no figure.
    const history = await ctx.temporal.handle(workflowId).fetchHistory();
    const done = (history.events ?? []).find((e) => isType(e, 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED'));
    if (done) firstTask.samples.push(eventMs(done) - sentAt);
  }
}

/**
 * Floor (e): one workflow task that starts 100 children, each of which
 * starts and waits on a timer: the parent's start until it has heard that
 * all 100 started and has ended (its result), and, from its history, the start
 * call until the last child's start was recorded.
 */
export async function childStartsScenario(ctx: BenchContext): Promise<void> {
  const row = ctx.row(`${CHILDREN} child starts in one workflow task, until the parent heard all started`, [], 'children');
  const last = ctx.row(`${CHILDREN} child starts in one workflow task, until the last started (history)`, []);
  for (let i = 0; i < 1 + ctx.counts.childBursts; i++) {
    const workflowId = `bench-children-${randomUUID()}`;
    const sentAt = performance.timeOrigin + performance.now();
    const ms = await row.time(() => ctx.temporal.execute(echoWorkflow, { taskQueue: ctx.taskQueue, workflowId, args: [{ children: CHILDREN }] }), i >= 1);
    if (ms === undefined || i < 1) continue;
    const history = await ctx.temporal.handle(workflowId).fetchHistory();
    const started = (history.events ?? []).filter((e) => isType(e, 'EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED'));
    if (started.length !== CHILDREN) row.fail(new Error(`${started.length} of ${CHILDREN} children started`));
    else last.samples.push(Math.max(...started.map(eventMs)) - sentAt);
  }
  // The children end 10 s after they start, a workflow task each: the next scenario (send_message) was timed while
  // the last thousand of them ended, on the same worker. It starts once they all have.
  for (;;) {
    const running = await ctx.temporal.count(`WorkflowId STARTS_WITH "bench-children-" AND ExecutionStatus = "Running"`);
    if (running === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}
