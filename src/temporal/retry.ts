import { WorkflowUpdateRPCTimeoutOrCancelledError, defaultGrpcRetryOptions, type GrpcRetryOptions } from '@temporalio/client';
import { google, temporal } from '@temporalio/proto';
import type { StatusObject } from '@grpc/grpc-js';

/**
 * The one retry policy for calls Dipper repeats itself (Temporal's own gRPC
 * retry interceptor runs under it, on every connection this module opens).
 * Only an Update is repeated, and only when the server says it was never
 * applied; every attempt carries the same Update id, so a retry of one the
 * server did take is answered, not applied again.
 */
export const MAX_ATTEMPTS = 12;

/**
 * Refusals that say the update was never applied, so sending it again is
 * safe: the recipient has too many updates in flight, the server handed it
 * to a workflow task that finished without looking at it, or the server
 * refused the workflow task that carried it.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const e = err as { code?: number; cause?: { code?: number; message?: string; type?: string }; message?: string };
  if (e.cause?.type === 'UnprocessedUpdate') return true;
  const text = `${e.message ?? ''} ${e.cause?.message ?? ''}`;
  // "unexpected workflow task failure": the server refused the workflow task that carried the update (a message it
  // could not match, seen when updates race a continue-as-new), so the update was never applied; the server's own
  // words for it are "most likely a transient error which will be resolved automatically by retries".
  return e.code === 8 || e.cause?.code === 8 || /too many outstanding|resource ?exhausted|wasn't processed by worker|unexpected workflow task failure/i.test(text);
}

/** Full jitter: spreads fifty senders hitting one recipient across the backoff window; never past the deadline. */
export function backoff(attempt: number, until: number): Promise<void> {
  const cap = Math.min(2000, 25 * 2 ** attempt);
  return new Promise((r) => setTimeout(r, Math.min(Math.random() * cap, Math.max(0, until - Date.now()))));
}

const RESOURCE_EXHAUSTED = 8;
const BUSY_WORKFLOW = temporal.api.enums.v1.ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_BUSY_WORKFLOW;
const RESOURCE_EXHAUSTED_FAILURE = 'type.googleapis.com/temporal.api.errordetails.v1.ResourceExhaustedFailure';

/**
 * Temporal's own gRPC retries (under the policy above, on every connection
 * this module opens), with a short first wait when one workflow is busy.
 * The server answers RESOURCE_EXHAUSTED both for a namespace over its rate,
 * which the SDK's 1 s first wait is for, and for a workflow busy for a
 * moment (cause BUSY_WORKFLOW): an Update or signal that met the workflow's
 * continue-as-new, which the server asks to be sent again so it reaches the
 * new run, or a Query past the workflow's buffer. That is over within a
 * workflow task; a spawn that met its leader's continue-as-new waited 1.6 s.
 */
export function grpcRetryOptions(): GrpcRetryOptions {
  return defaultGrpcRetryOptions({
    initialIntervalMs: (status) => (status.code !== RESOURCE_EXHAUSTED ? 100 : busyWorkflow(status) ? BUSY_FIRST_WAIT_MS : 1000),
  });
}

/** The first wait after a busy workflow's refusal: a workflow task's time, growing 1.7 times an attempt. */
const BUSY_FIRST_WAIT_MS = 25;

/** The refusal's cause, from the status details the server sends with it. */
export function busyWorkflow(status: Pick<StatusObject, 'metadata'>): boolean {
  for (const raw of status.metadata?.get('grpc-status-details-bin') ?? []) {
    try {
      const details = google.rpc.Status.decode(Buffer.isBuffer(raw) ? raw : Buffer.from(raw)).details ?? [];
      for (const d of details) {
        if (d.type_url === RESOURCE_EXHAUSTED_FAILURE && d.value && temporal.api.errordetails.v1.ResourceExhaustedFailure.decode(d.value).cause === BUSY_WORKFLOW) return true;
      }
    } catch {
      // Details this client cannot read: the SDK's own wait.
    }
  }
  return false;
}
