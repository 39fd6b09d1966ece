import {
  patched,
  workflowInfo,
  type ActivateInput,
  type ConcludeActivationInput,
  type ConcludeActivationOutput,
  type Next,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowInternalsInterceptor,
} from '@temporalio/workflow';
import { QUERY_COLD, QUERY_REFUSED } from '../src/common/pure/queryGuard';
import { tokenRegistryWorkflow } from './tokens/registry';

/**
 * Refuses to let a Query move the workflow forward, without ever failing a
 * workflow task.
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
 * start, and the events a Query brings come without one. But a real task
 * can carry an unchanged size too (the kill matrix's evidence: a task
 * started right after one that accepted an Update reported the same size),
 * and failing a real task with an Update in flight strands the workflow for
 * good (BAD_UPDATE_WORKFLOW_EXECUTION_MESSAGE, issue 20). So the sign only
 * makes the instance suspect; the Query that follows is refused, which
 * fails only that Query and makes core drop the run from its cache, and the
 * commands with it. The caller asks again, and the next workflow task
 * replays the history in order. A real task with a new size clears it.
 */
/** The token registry, which runs with no workflow cache (its own worker; workflows/tokens/registry.ts). */
function uncached(): boolean {
  try {
    return workflowInfo().workflowType === tokenRegistryWorkflow.name;
  } catch {
    return false;
  }
}

export class QueryCannotAdvance implements WorkflowInternalsInterceptor {
  /**
   * `growth: false` leaves out the refusal after history grew without a task (QUERY_REFUSED): only the doctor test
   * bundles it so, to show that the crash it runs breaks agents without that refusal.
   */
  constructor(private readonly guards: { growth: boolean } = { growth: true }) {}

  private last: { length: number; size: string } | undefined;
  /** History came without a workflow task's new size: a Query now could answer from (and keep) events no task has. */
  private suspect = false;
  /** This instance has run a workflow task live (not only replayed history). */
  private live = false;
  /** Its history ends the workflow (completed, continued as new, failed): no workflow task will follow. */
  private finished = false;

  activate(input: ActivateInput, next: Next<WorkflowInternalsInterceptor, 'activate'>): void {
    const { activation } = input;
    const jobs = activation.jobs ?? [];
    const isQuery = jobs.some((j) => j.queryWorkflow);
    // The token registry runs with no cache at all (workflows/tokens/registry.ts): every task, Query or not, builds
    // it from history and it is thrown away after, so neither hazard below can arise there.
    if (isQuery && uncached()) return next(input);
    // A Query that comes as a task of its own to an instance built from history for it (a fresh worker,
    // a cache eviction) leaves that instance in the cache part-way through a workflow task's events;
    // the next workflow task would then meet them grouped otherwise than replay groups them (seen in
    // the crash soak: an activity's completion applied together with a later Update). Refused, the
    // run is evicted, and the next workflow task replays it whole.
    if (isQuery && !this.live && !this.finished) throw new Error(QUERY_COLD);
    if (isQuery && this.suspect && !this.finished && this.guards.growth) throw new Error(QUERY_REFUSED);
    if (jobs.length > 0 && !isQuery && !activation.isReplaying) this.live = true;
    if (jobs.length > 0 && !isQuery) {
      const now = { length: activation.historyLength ?? 0, size: String(activation.historySizeBytes ?? 0) };
      const grewWithoutTask = this.last !== undefined && now.size !== '0' && now.length !== this.last.length && now.size === this.last.size;
      if (grewWithoutTask) this.suspect = true;
      else if (this.last === undefined || now.size !== this.last.size) this.suspect = false;
      this.last = now;
    }
    next(input);
  }

  concludeActivation(input: ConcludeActivationInput, next: Next<WorkflowInternalsInterceptor, 'concludeActivation'>): ConcludeActivationOutput {
    const out = next(input);
    if (out.commands.some((c) => c.completeWorkflowExecution || c.continueAsNewWorkflowExecution || c.failWorkflowExecution || c.cancelWorkflowExecution)) {
      this.finished = true;
    }
    return out;
  }
}

/**
 * The patch whose marker makes every run's first workflow task issue a
 * command. A run with nothing to do at its start (an agent continued as new
 * with nothing carried) would complete that task empty; an Update whose task
 * follows at once is then, on a worker building the run from history (a
 * fresh worker after a kill), applied in one activation with the workflow's
 * start, which replay never does, and the run can never be replayed again
 * (docs/decisions.md, "An empty workflow task before an Update";
 * test/upstream/firstTaskBeforeUpdate.test.ts). Runs started before it have
 * no marker and replay without one.
 */
export const FIRST_TASK_MARK = 'dipper-first-task-command';

class FirstTaskCommand implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    patched(FIRST_TASK_MARK);
    return next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ inbound: [new FirstTaskCommand()], internals: [new QueryCannotAdvance()] });
