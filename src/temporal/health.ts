import { temporal } from '@temporalio/proto';
import type { Temporal } from './temporal';

const { EventType, WorkflowTaskFailedCause: Cause } = temporal.api.enums.v1;

/**
 * Workflow task failures that come from the server's or a worker's
 * circumstances and pass on the next attempt. Every other cause
 * (nondeterminism, an unhandled error in workflow code, payload and
 * pending-item limits, bad command attributes) is what the workflow's own
 * code and history produce, so every retry fails the same way.
 */
const PASSING = new Set<number>([
  Cause.WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_UPDATE,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_PAUSE_REQUESTED_BEFORE_TASK_STARTED,
]);

/** Signals that arrive while the task keeps failing are appended after the failure; this many events back is plenty. */
const LOOK_BACK = 100;

/**
 * Whether the workflow's last workflow task failed for a cause that repeats
 * and none has completed since: the workflow cannot answer until it is
 * repaired. Retried attempts of a failing task are not written to history,
 * so its newest task outcome is the failure itself. Asked only after a call
 * has failed, so a healthy workflow never pays for it; when the question
 * itself cannot be answered (Temporal is down) the answer is no, and the
 * caller hears a retryable error.
 */
export async function keepsFailing(client: Temporal, workflowId: string, deadline: number): Promise<boolean> {
  if (deadline - Date.now() < 20) return false;
  try {
    const page = await client.historyReverse(workflowId, LOOK_BACK, deadline);
    for (const event of page.history?.events ?? []) {
      switch (event.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        case EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
          return false;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
          return !PASSING.has(event.workflowTaskFailedEventAttributes?.cause ?? Cause.WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED);
      }
    }
    return false;
  } catch {
    return false;
  }
}
