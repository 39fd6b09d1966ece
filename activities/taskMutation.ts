import { ApplicationFailure } from '@temporalio/common';
import type { TaskMutationInput, TaskMutationOutcome } from '../workflows/taskOp/types';
import { MissingCredentialContext, NotSent, OutcomeUnknown, type TaskApiClient } from '../src/common/taskApi/client';
import { NoAgentToken } from '../src/common/taskApi/tokens';

/**
 * The activity behind every task board mutation. A request that never left
 * is thrown back (retryable: sending again is safe); one whose outcome is
 * unknown is thrown back too when sending again is safe, and reported as
 * `unknown` otherwise, so the workflow never sends it a second time.
 */
export function createTaskActivities(tasks: TaskApiClient) {
  return {
    async taskMutation(input: TaskMutationInput): Promise<TaskMutationOutcome> {
      try {
        const answer = await tasks.request({ op: input.op, agent: { agentId: input.agentId, channels: input.channels }, body: input.body });
        return { kind: 'answer', answer };
      } catch (err) {
        if (err instanceof OutcomeUnknown && !input.retrySafe) return { kind: 'unknown' };
        if (err instanceof MissingCredentialContext) throw ApplicationFailure.nonRetryable(err.message, 'MissingCredentialContext');
        if (err instanceof NotSent || err instanceof OutcomeUnknown || err instanceof NoAgentToken) {
          throw ApplicationFailure.retryable(err.message, err.constructor.name);
        }
        throw err;
      }
    },
  };
}
