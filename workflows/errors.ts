import { ApplicationFailure } from '@temporalio/common';

/**
 * A business refusal from a workflow: its type is the spec's error code and
 * its single detail carries the code's extra fields. Non-retryable because
 * sending the same input again cannot succeed.
 */
export function refuse(code: string, message: string, extra: Record<string, unknown> = {}): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, details: [extra], nonRetryable: true });
}

/** The innermost message of an activity failure, which says what went wrong (not where). */
export function failureText(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause as { message?: string; cause?: unknown };
  return (e?.message ?? 'unknown failure').slice(0, 300);
}
