import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  isGrpcServiceError,
} from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { ConnectorError, type IsphereCode } from '../common/isphere/errors';
import { QUERY_COLD, QUERY_REFUSED } from '../common/pure/queryGuard';
import { needsRepair, NothingDone, stepFailed, unavailable } from '../common/serviceErrors';
import { safeMessage, type Logger } from '../log';
import { internalError } from '../common/toolErrors';
import { keepsFailing } from './health';
import type { Temporal } from './temporal';

/**
 * The one map from Temporal's errors to Dipper's codes. What a Temporal
 * failure means is decided once here (`failureOf`); each surface then names
 * it in its own vocabulary: the beidou and operator codes (`toolFailure`),
 * the isphere contract's codes (`isphereRefusal`).
 */

/** The workflow behind a call does not exist (or has closed); callers turn this into their own code. */
export class NotFound extends Error {}

/** The owning workflow refused the call: it changed nothing. `unavailable` refusals (retry shortly) are retryable. */
export class WorkflowRefusal extends NothingDone {}

export const isNotFound = (err: unknown): boolean => err instanceof WorkflowNotFoundError;
export const isAlreadyStarted = (err: unknown): boolean => err instanceof WorkflowExecutionAlreadyStartedError;
/** A gRPC status from the server (3 INVALID_ARGUMENT, 5 NOT_FOUND, 6 ALREADY_EXISTS, ...). */
export const grpcStatus = (err: unknown): number | undefined => (isGrpcServiceError(err) ? err.code : undefined);

/**
 * gRPC statuses that mean no answer came: the deadline passed or the call
 * was cut (1, 4), Temporal is busy (8) or unreachable (14), or the workflow
 * task is failing (9: "Workflow Task in failed state"), which may pass.
 */
const NO_ANSWER = new Set([1, 4, 8, 9, 14]);

/** Statuses under which a Query may still be answered by a later attempt: 9 is diagnosed at once instead. */
const QUERY_MAY_ANSWER_LATER = new Set([1, 4, 14]);

/** The error, or a cause up to three levels under it (the client wraps the gRPC error), carries one of the statuses. */
function hasStatus(err: unknown, statuses: ReadonlySet<number>): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number' && statuses.has(e.code)) return true;
  }
  return false;
}

function noAnswer(err: unknown): boolean {
  return err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || hasStatus(err, NO_ANSWER);
}

/**
 * A Query left unanswered for a reason that a later attempt can get past: no
 * answer in time (a dead worker's queue), Temporal unreachable, or refused by
 * the workflow's guard (workflows/interceptors.ts). Not a failing workflow
 * task (9): that is diagnosed at once.
 */
export function queryMayAnswerLater(err: unknown): boolean {
  const text = err instanceof Error ? err.message : '';
  return text.includes(QUERY_REFUSED) || text.includes(QUERY_COLD) || hasStatus(err, QUERY_MAY_ANSWER_LATER);
}

/** Spec codes are lower-case words (`unknown_task`); `internal` and error class names (`Error`) are not refusals. */
function isRefusal(type: string | undefined | null): type is string {
  return typeof type === 'string' && type !== 'internal' && /^[a-z][a-z0-9_.]*$/.test(type);
}

/** What a failed Temporal call means, before any surface names it. */
export type Failure =
  | { kind: 'not_found' }
  /** A step of the call (an activity) failed every attempt with a failure a retry might get past, or never started. */
  | { kind: 'step_failed'; cause: unknown }
  /** The workflow refused the Update with a spec code: it changed nothing. */
  | { kind: 'refused'; type: string; message: string; details: Record<string, unknown> }
  /** No answer in time, or the workflow asked to be asked again (workflows/interceptors.ts). */
  | { kind: 'no_answer' }
  | { kind: 'other' };

export function failureOf(err: unknown): Failure {
  if (err instanceof WorkflowNotFoundError) return { kind: 'not_found' };
  // Nothing is wrong with the call: `unavailable`, not a refusal (its type is the activity's, never a spec code) and
  // not `internal`, which says Dipper has a bug. Workflow refusals are never retryable (workflows/errors.ts).
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
    // A step on a pinned run's host that no worker of the host took in time (the host is down) fails the same way.
    // (Only a step never started: one that timed out while running may have acted.)
    if ((cause instanceof ApplicationFailure && !cause.nonRetryable) || (cause instanceof TimeoutFailure && cause.timeoutType === TimeoutType.SCHEDULE_TO_START)) {
      return { kind: 'step_failed', cause };
    }
  }
  // Only a workflow's refusal (a spec code such as unknown_task) is shown; an activity's own failure
  // (`internal` from a disk activity, an error class name such as `Error`) is internal (docs/decisions.md, ids).
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure && isRefusal(err.cause.type)) {
    return { kind: 'refused', type: err.cause.type, message: err.cause.message, details: (err.cause.details?.[0] ?? {}) as Record<string, unknown> };
  }
  const text = err instanceof Error ? err.message : '';
  if (/workflow execution already completed|not found/i.test(text)) return { kind: 'not_found' };
  if (noAnswer(err) || text.includes(QUERY_REFUSED) || text.includes(QUERY_COLD)) return { kind: 'no_answer' };
  return { kind: 'other' };
}

const AGENT_OF = /^run\/[^/]+\/agent\/([^/]+)$/;

/**
 * A failed call in the tool and operator codes: NotFound (callers name it),
 * a WorkflowRefusal with the workflow's code, `unavailable` (or
 * `needs_repair` when the workflow's task keeps failing, asked before
 * `diagnosis`), else `internal`.
 */
export async function toolFailure(
  err: unknown,
  at: { what: string; workflowId?: string; diagnosis: number; temporal: Temporal; log: Logger },
): Promise<Error> {
  const failure = failureOf(err);
  switch (failure.kind) {
    case 'not_found':
      return new NotFound(at.what);
    case 'step_failed':
      at.log.warn({ call: at.what, err: safeMessage(failure.cause) }, 'a step of the call failed on every attempt');
      return stepFailed();
    case 'refused':
      return new WorkflowRefusal(failure.type, failure.message, failure.details, failure.type === 'unavailable');
    case 'no_answer':
      if (at.workflowId && (await keepsFailing(at.temporal, at.workflowId, at.diagnosis))) {
        at.log.error({ call: at.what, workflow: at.workflowId }, 'workflow task keeps failing; the workflow needs repair');
        return needsRepair(AGENT_OF.exec(at.workflowId)?.[1]);
      }
      at.log.warn({ call: at.what, err: safeMessage(err), cause: safeMessage(innermost(err)) }, 'temporal did not answer in time');
      return unavailable();
    case 'other':
      at.log.error({ call: at.what, err: safeMessage(err) }, 'temporal call failed');
      return internalError();
  }
}

/** The deepest cause: a client error's own message ("Workflow Update failed") says less than the gRPC status under it. */
function innermost(err: unknown): unknown {
  let e = err;
  for (let depth = 0; depth < 5 && e instanceof Error && e.cause !== undefined; depth++) e = e.cause;
  return e;
}

/** The workflow's own failure of an Update (its ApplicationFailure, whatever its type), or undefined. */
export function updateFailureOf(err: unknown): ApplicationFailure | undefined {
  return err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause : undefined;
}

/** A workflow's refusal (its type) in the isphere codes; other types are not isphere refusals. */
const ISPHERE_REFUSALS: Record<string, { code: IsphereCode; retryable: boolean }> = {
  approval_required: { code: 'APPROVAL_REQUIRED', retryable: false },
  idempotency_conflict: { code: 'IDEMPOTENCY_CONFLICT', retryable: false },
  not_logged_in: { code: 'NOT_LOGGED_IN', retryable: false },
  source_unavailable: { code: 'SOURCE_UNAVAILABLE', retryable: true },
  audit_unavailable: { code: 'INTERNAL_ERROR', retryable: true },
};

/**
 * An approval's refusal of an Update in the isphere codes, or undefined.
 * Read from the workflow's own failure whatever its retry flag, as the
 * approval workflow raises them (its refusals are its answers, not steps).
 */
export function isphereRefusal(err: unknown): ConnectorError | undefined {
  const cause = updateFailureOf(err);
  if (!cause?.type || !ISPHERE_REFUSALS[cause.type]) return undefined;
  const { code, retryable } = ISPHERE_REFUSALS[cause.type];
  const extra = { ...((cause.details?.[0] ?? {}) as Record<string, unknown>) };
  delete extra.retryable;
  return new ConnectorError(code, cause.message, retryable, { ...extra, ...(code === 'INTERNAL_ERROR' ? { reason: cause.type } : {}) });
}
