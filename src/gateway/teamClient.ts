import type { ProcessMetrics } from '../metrics/temporalCalls';
import { randomUUID } from 'node:crypto';
import {
  Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, TimeoutFailure, TimeoutType, type QueryDefinition, type UpdateDefinition } from '@temporalio/common';
import { agentWorkflowId, runWorkflowId } from '../../workflows/ids';
import { QUERY_COLD, QUERY_REFUSED, wakeSignal } from '../../workflows/interceptors';
import { safeMessage, type Logger } from '../log';
import { internalError, ToolError } from '../registry/errors';
import { callDeadline } from './deadline';
import { needsRepair, stepFailed, unavailable } from './serviceErrors';
import { keepsFailing } from './workflowHealth';

/** The workflow behind a call does not exist (or has closed); callers turn this into their own code. */
export class NotFound extends Error {}

/** The owning workflow refused the call: it changed nothing. `unavailable` refusals (retry shortly) are retryable. */
export class WorkflowRefusal extends ToolError {}

const MAX_ATTEMPTS = 12;

/**
 * Refusals that say the update was never applied, so sending it again is
 * safe: the recipient has too many updates in flight, the server handed it
 * to a workflow task that finished without looking at it, or the server
 * refused the workflow task that carried it.
 */
function isRetryable(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const e = err as { code?: number; cause?: { code?: number; message?: string; type?: string }; message?: string };
  if (e.cause?.type === 'UnprocessedUpdate') return true;
  const text = `${e.message ?? ''} ${e.cause?.message ?? ''}`;
  // "unexpected workflow task failure": the server refused the workflow task that carried the update (a message it
  // could not match, seen when updates race a continue-as-new), so the update was never applied; the server's own
  // words for it are "most likely a transient error which will be resolved automatically by retries".
  return e.code === 8 || e.cause?.code === 8 || /too many outstanding|resource ?exhausted|wasn't processed by worker|unexpected workflow task failure/i.test(text);
}

/**
 * gRPC statuses that mean no answer came: the deadline passed or the call
 * was cut (1, 4), Temporal is busy (8) or unreachable (14), or the workflow
 * task is failing (9: "Workflow Task in failed state"), which may pass.
 */
const NO_ANSWER = new Set([1, 4, 8, 9, 14]);

/** Our own clock on a call: gRPC's deadline has been seen to let a Query to a dead worker hang well past it under load. */
export class NoAnswerInTime extends Error {
  readonly code = 4; // gRPC DEADLINE_EXCEEDED, so noAnswer() reads it like the server's own
  constructor() {
    super('no answer before the deadline');
  }
}

/** `call`, or NoAnswerInTime once `deadline` (ms since the epoch) passes; the call itself is left to its own deadline. */
export function beforeDeadline<T>(call: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerInTime()), Math.max(0, deadline - Date.now()));
  });
  call.catch(() => undefined);
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}

function noAnswer(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number' && NO_ANSWER.has(e.code)) return true;
  }
  return false;
}

/** Spec codes are lower-case words (`unknown_task`); `internal` and error class names (`Error`) are not refusals. */
function isRefusal(type: string | undefined | null): type is string {
  return typeof type === 'string' && type !== 'internal' && /^[a-z][a-z0-9_.]*$/.test(type);
}

/** Full jitter: spreads fifty senders hitting one recipient across the backoff window; never past the deadline. */
function backoff(attempt: number, until: number): Promise<void> {
  const cap = Math.min(2000, 25 * 2 ** attempt);
  return new Promise((r) => setTimeout(r, Math.min(Math.random() * cap, Math.max(0, until - Date.now()))));
}

/** A Query's deadline: a second short of the sticky timeout, and never under half a second. */
export function queryCapMs(stickyTimeoutMs: number): number {
  return Math.max(500, stickyTimeoutMs - 1000);
}

/**
 * A Query, and if it reached a workflow no worker has run yet (QUERY_COLD,
 * workflows/interceptors.ts) a wake signal and the Query again: the signal's
 * workflow task has a worker run the workflow from its whole history, and
 * the server holds the second Query until that task is done.
 */
export async function queryAwake<Ret, Args extends unknown[]>(handle: WorkflowHandle, def: QueryDefinition<Ret, Args>, args: Args): Promise<Ret> {
  try {
    return await handle.query(def, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.includes(QUERY_COLD)) throw err;
    await handle.signal(wakeSignal);
    return handle.query(def, ...args);
  }
}

const AGENT_OF = /^run\/[^/]+\/agent\/([^/]+)$/;

/**
 * The gateway's only path to Temporal. It turns workflow refusals into
 * ToolErrors carrying the spec's code, retries a busy recipient with
 * jittered backoff, bounds every call by the caller's deadline (answering
 * `unavailable`, or `needs_repair` when the workflow's task keeps failing),
 * and hides everything else behind an internal error.
 */
export class TeamClient {
  constructor(
    readonly client: Client,
    private readonly log: Logger,
    /** The bound on a call made outside any tool call's deadline (runtime and operator API). */
    readonly callTimeoutMs: number,
    /** The longest a Query's RPC may wait: below the workers' sticky queue timeout. */
    private readonly queryCapMs: number = Number.POSITIVE_INFINITY,
    private readonly metrics?: ProcessMetrics,
  ) {}

  agent(runId: string, agentId: string): WorkflowHandle {
    return this.client.workflow.getHandle(agentWorkflowId(runId, agentId));
  }

  run(runId: string): WorkflowHandle {
    return this.client.workflow.getHandle(runWorkflowId(runId));
  }

  async update<Ret, Args extends unknown[]>(
    handle: WorkflowHandle,
    def: UpdateDefinition<Ret, Args>,
    args: Args,
    updateId: string = randomUUID(),
  ): Promise<Ret> {
    const budget = this.budget();
    // One id for every attempt: a retry of an Update the server already took is answered, not applied again.
    for (let attempt = 0; ; attempt++) {
      try {
        // The SDK's overloads split on arity; the definition already ties args to the handler's type.
        const call = handle.executeUpdate as (d: unknown, o: { args: unknown[]; updateId: string }) => Promise<Ret>;
        return await this.client.withDeadline(budget.rpc, () => call.call(handle, def, { args, updateId }));
      } catch (err) {
        if (isRetryable(err) && attempt < MAX_ATTEMPTS && Date.now() < budget.rpc) {
          await backoff(attempt, budget.rpc);
          continue;
        }
        throw await this.failure(err, def.name, handle.workflowId, budget.diagnosis);
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
   */
  async query<Ret, Args extends unknown[]>(handle: WorkflowHandle, def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    this.metrics?.queries.inc({ query: def.name });
    return this.bounded(def.name, () => queryAwake(handle, def, args), handle.workflowId, this.queryCapMs);
  }

  /** Any other Temporal call (a workflow start, a visibility list), with the same bound and the same failures. */
  async bounded<T>(what: string, fn: () => Promise<T>, workflowId?: string, capMs?: number): Promise<T> {
    const budget = this.budget(capMs);
    try {
      return await beforeDeadline(this.client.withDeadline(budget.rpc, fn), budget.rpc + 100);
    } catch (err) {
      throw await this.failure(err, what, workflowId, budget.diagnosis);
    }
  }

  /** The run an agent id belongs to, from visibility; used only to explain a failed lookup. */
  async runOfAgent(agentId: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]+$/.test(agentId)) return null;
    return this.bounded('runOfAgent', async () => {
      for await (const wf of this.client.workflow.list({ query: `DipperAgentId = "${agentId}"`, pageSize: 1 })) {
        const runId = wf.searchAttributes?.DipperRunId;
        return Array.isArray(runId) && typeof runId[0] === 'string' ? runId[0] : null;
      }
      return null;
    });
  }

  /**
   * The RPC gets the caller's deadline less a reserve, so that when it
   * fails there is still time to ask whether the workflow is broken; the
   * diagnosis ends just before the deadline, which the tool call's own
   * timer holds.
   */
  private budget(capMs = Number.POSITIVE_INFINITY): { rpc: number; diagnosis: number } {
    const deadline = callDeadline() ?? Date.now() + this.callTimeoutMs;
    const reserve = Math.min(1000, this.callTimeoutMs / 4);
    return { rpc: Math.min(deadline - reserve, Date.now() + capMs), diagnosis: deadline - reserve / 5 };
  }

  private async failure(err: unknown, what: string, workflowId: string | undefined, diagnosisDeadline: number): Promise<Error> {
    if (err instanceof WorkflowNotFoundError) return new NotFound(what);
    // A step of the call (an activity: a disk write, a lookup) failed every attempt with a failure that a retry might
    // get past. Nothing is wrong with the call: `unavailable`, not a refusal (its type is the activity's, never a spec
    // code) and not `internal`, which says Dipper has a bug. Workflow refusals are never retryable (workflows/errors.ts).
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
      // A step on a pinned run's host that no worker of the host took in time (the host is down) fails the same way.
      // (Only a step never started: one that timed out while running may have acted.)
      if ((cause instanceof ApplicationFailure && !cause.nonRetryable) || (cause instanceof TimeoutFailure && cause.timeoutType === TimeoutType.SCHEDULE_TO_START)) {
        this.log.warn({ call: what, err: safeMessage(cause) }, 'a step of the call failed on every attempt');
        return stepFailed();
      }
    }
    // Only a workflow's refusal (a spec code such as unknown_task) is shown; an activity's own failure
    // (`internal` from a disk activity, an error class name such as `Error`) is internal (docs/decisions.md, ids).
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure && isRefusal(err.cause.type)) {
      const extra = (err.cause.details?.[0] ?? {}) as Record<string, unknown>;
      return new WorkflowRefusal(err.cause.type, err.cause.message, extra, err.cause.type === 'unavailable');
    }
    const text = err instanceof Error ? err.message : '';
    if (/workflow execution already completed|not found/i.test(text)) return new NotFound(what);
    // The workflow refused a Query that would have moved it forward outside a workflow task (workflows/interceptors.ts).
    if (noAnswer(err) || text.includes(QUERY_REFUSED) || text.includes(QUERY_COLD)) {
      if (workflowId && (await keepsFailing(this.client, workflowId, diagnosisDeadline))) {
        this.log.error({ call: what, workflow: workflowId }, 'workflow task keeps failing; the workflow needs repair');
        return needsRepair(AGENT_OF.exec(workflowId)?.[1]);
      }
      this.log.warn({ call: what, err: safeMessage(err), cause: safeMessage(innermost(err)) }, 'temporal did not answer in time');
      return unavailable();
    }
    this.log.error({ call: what, err: safeMessage(err) }, 'temporal call failed');
    return internalError();
  }
}

/** The deepest cause: a client error's own message ("Workflow Update failed") says less than the gRPC status under it. */
function innermost(err: unknown): unknown {
  let e = err;
  for (let depth = 0; depth < 5 && e instanceof Error && e.cause !== undefined; depth++) e = e.cause;
  return e;
}
