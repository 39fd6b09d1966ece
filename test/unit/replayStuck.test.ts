import { failingTask } from '../../src/ops/replayAll';

type History = Parameters<typeof failingTask>[0];
const ending = (...events: object[]) => ({ events }) as unknown as History;

describe('a running workflow counts as stuck', () => {
  it('when its last task failed, and not when the server only turned a completion down for new events', () => {
    expect(failingTask(ending({ workflowTaskFailedEventAttributes: { cause: 'WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE' } }), 1)).toBe(
      'history ends in WorkflowTaskFailed',
    );
    // UnhandledCommand: a fresh task is scheduled at once (attempt 1); a stopped worker may leave it there.
    expect(failingTask(ending({ workflowTaskFailedEventAttributes: { cause: 'WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND' } }), 1)).toBeUndefined();
    expect(failingTask(ending({ workflowTaskFailedEventAttributes: { cause: 1 } }), 1)).toBeUndefined();
    // Tried again and again, it is stuck whatever the first failure was.
    expect(failingTask(ending({ workflowTaskFailedEventAttributes: { cause: 1 } }), 3)).toBe('workflow task attempt 3');
    expect(failingTask(ending({ workflowTaskCompletedEventAttributes: {} }), 1)).toBeUndefined();
    expect(failingTask(ending({ workflowTaskTimedOutEventAttributes: {} }), 2)).toBeUndefined();
  });
});
