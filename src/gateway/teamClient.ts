import type { ProcessMetrics } from '../metrics/temporalCalls';
import { randomUUID } from 'node:crypto';
import type { QueryDefinition, UpdateDefinition, Workflow } from '@temporalio/common';
import { agentWorkflowId, runWorkflowId } from '../../workflows/ids';
import type { Logger } from '../log';
import type { TeamWorkflows } from '../registry/capabilities';
import { backoff, beforeDeadline, budget, isRetryable, MAX_ATTEMPTS, MIN_QUERY_ATTEMPT_MS, queryCapMs, queryMayAnswerLater, queryRetryAt, toolFailure, type StartOptions, type Temporal, type WorkflowRef } from '../temporal';

// Callers name these by the gateway's client; they are the module's error map and deadline policy.
export { beforeDeadline, NoAnswerInTime, NotFound, queryCapMs, WorkflowRefusal } from '../temporal';

/**
 * The gateway's use of src/temporal: every call bounded by its caller's
 * deadline (deadlines.ts), Updates retried while the server says they were
 * never applied (retry.ts), and failures named in the tool codes
 * (errors.ts: refusals keep the workflow's code, no answer is `unavailable`
 * or `needs_repair`, everything else an internal error).
 */
export class TeamClient implements TeamWorkflows {
  constructor(
    readonly temporal: Temporal,
    private readonly log: Logger,
    /** The bound on a call made outside any tool call's deadline (runtime and operator API). */
    readonly callTimeoutMs: number,
    /** The workers' sticky queue timeout: each Query attempt ends before it (deadlines.ts). */
    private readonly stickyTimeoutMs: number = Number.POSITIVE_INFINITY,
    private readonly metrics?: ProcessMetrics,
  ) {}

  agent(runId: string, agentId: string): WorkflowRef {
    return this.temporal.handle(agentWorkflowId(runId, agentId));
  }

  run(runId: string): WorkflowRef {
    return this.temporal.handle(runWorkflowId(runId));
  }

  /** Any other workflow of a run (a question, an approval), by its id. */
  handle<W extends Workflow = Workflow>(workflowId: string): WorkflowRef<W> {
    return this.temporal.handle<W>(workflowId);
  }

  start<W extends Workflow>(workflow: W, options: StartOptions<W>): Promise<WorkflowRef<W>> {
    return this.temporal.start(workflow, options);
  }

  async update<Ret, Args extends unknown[]>(
    handle: WorkflowRef,
    def: UpdateDefinition<Ret, Args>,
    args: Args,
    updateId: string = randomUUID(),
  ): Promise<Ret> {
    const time = budget(this.callTimeoutMs);
    // One id for every attempt: a retry of an Update the server already took is answered, not applied again.
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.temporal.withDeadline(time.rpc, () => handle.update(def, args, updateId));
      } catch (err) {
        if (isRetryable(err) && attempt < MAX_ATTEMPTS && Date.now() < time.rpc) {
          await backoff(attempt, time.rpc);
          continue;
        }
        throw await this.failure(err, def.name, handle.workflowId, time.diagnosis);
      }
    }
  }

  /**
   * A Query's RPC never outlives the worker's sticky queue timeout. The
   * server first offers a Query to the worker that holds the workflow; if
   * that worker is dead it waits out the sticky timeout and then, while the
   * caller still waits, hands the Query to any worker with the history as it
   * is by then. A fresh worker answering it applies the events that arrived
   * meanwhile and carries the commands they produce into the next workflow
   * task, ahead of any Update in it, which replay orders the other way round
   * (docs/decisions.md, "A Query must not outlive a dead worker").
   *
   * An attempt left unanswered is sent again once the server has given up
   * on the dead worker's queue (queryRetryAt), while the call has time: so
   * a read made as a worker dies is answered by its successor instead of
   * refused.
   */
  async query<Ret, Args extends unknown[]>(handle: WorkflowRef, def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    this.metrics?.queries.inc({ query: def.name });
    const time = budget(this.callTimeoutMs);
    const cap = Number.isFinite(this.stickyTimeoutMs) ? queryCapMs(this.stickyTimeoutMs) : Number.POSITIVE_INFINITY;
    for (let attempt = 0; ; attempt++) {
      const sentAt = Date.now();
      const rpc = Math.min(time.rpc, sentAt + cap);
      try {
        return await beforeDeadline(this.temporal.withDeadline(rpc, () => handle.query(def, ...args)), rpc + 100);
      } catch (err) {
        // Only the first attempt can find the workflow's stickiness on a dead worker's queue: once the server gave up
        // on that queue (or held the Query behind a task, which a live worker then completes), the next attempts
        // follow one another, a quarter second apart at least (one refused at once, Temporal down, is not hammered).
        const again = attempt === 0 ? queryRetryAt(sentAt, this.stickyTimeoutMs) : Math.max(Date.now(), sentAt + 250);
        if (!queryMayAnswerLater(err) || again + MIN_QUERY_ATTEMPT_MS > time.rpc) {
          throw await this.failure(err, def.name, handle.workflowId, time.diagnosis);
        }
        await new Promise((r) => setTimeout(r, Math.max(0, again - Date.now())));
      }
    }
  }

  /** Any other Temporal call (a workflow start, a visibility list), with the same bound and the same failures. */
  async bounded<T>(what: string, fn: () => Promise<T>, workflowId?: string, capMs?: number): Promise<T> {
    const time = budget(this.callTimeoutMs, capMs);
    try {
      return await beforeDeadline(this.temporal.withDeadline(time.rpc, fn), time.rpc + 100);
    } catch (err) {
      throw await this.failure(err, what, workflowId, time.diagnosis);
    }
  }

  /** The run an agent id belongs to, from visibility; used only to explain a failed lookup. */
  async runOfAgent(agentId: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]+$/.test(agentId)) return null;
    return this.bounded('runOfAgent', async () => {
      for await (const wf of this.temporal.list(`DipperAgentId = "${agentId}"`, 1)) {
        const runId = wf.searchAttributes?.DipperRunId;
        return Array.isArray(runId) && typeof runId[0] === 'string' ? runId[0] : null;
      }
      return null;
    });
  }

  private failure(err: unknown, what: string, workflowId: string | undefined, diagnosis: number): Promise<Error> {
    return toolFailure(err, { what, workflowId, diagnosis, temporal: this.temporal, log: this.log });
  }
}
