import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { TaskMutationActivities, TaskMutationInput, TaskMutationOutcome } from './types';

export type { TaskMutationInput, TaskMutationOutcome };

const NOT_SENT = ['NotSent', 'NoAgentToken', 'MissingCredentialContext'];

// A mutation that is safe to send again (a keyed create: the service's receipt answers the repeat; a claim: it sets a
// desired state) is retried; any other is attempted once, because after a timeout nobody knows whether it took effect.
const retried = proxyActivities<TaskMutationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 ms', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 6 },
});
const once = proxyActivities<TaskMutationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * One task board mutation (an `agentteam` tool call) as a short workflow:
 * its id comes from the call's idempotency key when it has one, so a
 * gateway that crashed, or a client that sent the call again, attaches to
 * the same execution instead of making the request twice. It holds one
 * activity and ends: it cannot wedge (every attempt has a deadline and the
 * attempts are bounded) and cannot outgrow Temporal (a handful of events).
 */
export async function taskMutationWorkflow(input: TaskMutationInput): Promise<TaskMutationOutcome> {
  const acts = input.retrySafe ? retried : once;
  try {
    return await acts.taskMutation(input);
  } catch (err) {
    if (err instanceof ActivityFailure) {
      // Refused before anything was sent (the service unreachable, no token): nothing happened.
      if (err.cause instanceof ApplicationFailure && NOT_SENT.includes(err.cause.type ?? '')) return { kind: 'not_sent' };
      // Timed out, or its worker died mid-request: it may have taken effect.
      return { kind: 'unknown' };
    }
    throw err;
  }
}
