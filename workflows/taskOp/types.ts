import type { TaskAnswer, TaskOp } from '../../src/common/taskApi/client';

export interface TaskMutationInput {
  op: TaskOp;
  agentId: string;
  /** The boards the agent's token must reach (its run's and its teams'). */
  channels: string[];
  /** The request body, in the Task API's own field names. No credential is ever part of it. */
  body: Record<string, unknown>;
  /** Whether sending it again cannot do it twice (keyed create, claim). */
  retrySafe: boolean;
}

/** The service's answer; `unknown` when the request may have been applied and no answer came; `not_sent` when it never left. */
export type TaskMutationOutcome = { kind: 'answer'; answer: TaskAnswer } | { kind: 'unknown' } | { kind: 'not_sent' };

export interface TaskMutationActivities {
  taskMutation(input: TaskMutationInput): Promise<TaskMutationOutcome>;
}
