import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';

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
