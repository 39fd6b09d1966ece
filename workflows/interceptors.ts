import type { ActivateInput, Next, WorkflowInterceptorsFactory, WorkflowInternalsInterceptor } from '@temporalio/workflow';

/** The failure message of a refused Query; the gateway answers it as `unavailable`, to be asked again. */
export const QUERY_REFUSED = 'dipper: history grew without a workflow task; ask again';

/**
 * Refuses to let a Query move the workflow forward.
 *
 * A Query that comes as a task of its own, after the history grew without a
 * workflow task (a worker died while a timer ran, or an activity finished),
 * makes the SDK's core apply the new events first. The workflow answers
 * them with commands (an activity for the fired timer) that core keeps and
 * sends with the next workflow task, ahead of any Update that task accepts;
 * replay accepts the Update first, and the workflow can never be replayed
 * again (docs/decisions.md, "A Query must not outlive a dead worker").
 *
 * Core's sign of it: an activation whose history grew but whose history
 * size did not. Every workflow task carries the size of the history at its
 * start, so a real one always brings a new size; the events a Query brings
 * come without one. Failing that activation makes core drop the run from
 * its cache, and the commands with it; the Query fails, the caller asks
 * again, and the next workflow task replays the history in order.
 */
class QueryCannotAdvance implements WorkflowInternalsInterceptor {
  private last: { length: number; size: string } | undefined;

  activate(input: ActivateInput, next: Next<WorkflowInternalsInterceptor, 'activate'>): void {
    const { activation } = input;
    const jobs = activation.jobs ?? [];
    if (jobs.length > 0 && !jobs.some((j) => j.queryWorkflow)) {
      const now = { length: activation.historyLength ?? 0, size: String(activation.historySizeBytes ?? 0) };
      const grewWithoutTask = this.last !== undefined && now.size !== '0' && now.length !== this.last.length && now.size === this.last.size;
      if (grewWithoutTask) throw new Error(QUERY_REFUSED);
      this.last = now;
    }
    next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ internals: [new QueryCannotAdvance()] });
