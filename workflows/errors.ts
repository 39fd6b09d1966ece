import { ApplicationFailure } from '@temporalio/common';

/**
 * A business refusal from a workflow: its type is the spec's error code and
 * its single detail carries the code's extra fields. Non-retryable because
 * sending the same input again cannot succeed.
 */
export function refuse(code: string, message: string, extra: Record<string, unknown> = {}): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, details: [extra], nonRetryable: true });
}
