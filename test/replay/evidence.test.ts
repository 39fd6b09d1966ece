import fs from 'node:fs';
import path from 'node:path';
import Long from 'long';
import { resetEventId } from '../../src/ops/doctor';
import { QueryCannotAdvance } from '../../workflows/interceptors';
import { QUERY_REFUSED } from '../../src/common/pure/queryGuard';
import { projectRoot } from '../support/processes';
import { recordedSet, updateWindows } from '../support/historyShape';

/**
 * The history captured after the kill -9 of issue 5: one agentWorkflow of
 * main at c1efba7, run with 10 agents messaging each other while the worker
 * was killed with SIGKILL and restarted. Copied from the evidence folder
 * beside the repository (shared/evidence/worker-kill-nondeterminism.history.json,
 * described in that folder's README), so the test stands alone. Its first
 * task after the timed-out one scheduled recordEvents (940) before
 * accepting an Update (941), and replay then failed at 940: replay always
 * accepts the Update first. docs/decisions.md, "A Query must not outlive a
 * dead worker", says how it came about. The code that made it has since
 * been rewritten (its patch markers no longer replay): the history is data
 * for the doctor's reading of it.
 */
const file = path.join(projectRoot, 'test', 'fixtures', 'histories', 'worker-kill-nondeterminism.history.json');
const history = JSON.parse(fs.readFileSync(file, 'utf8'));

it('gives the doctor the task that produced those commands as the reset point', () => {
  const message = 'Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 940, ActivityTaskScheduled)';
  expect(resetEventId(history.events, message)).toBe(939);
  expect(resetEventId(history.events, 'some other failure')).toBeUndefined();
});

/**
 * An agent of the kill matrix of issue 20 (main at cf7a76e; copied from shared/evidence/kill-matrix/hist-ag_e01f9ac577d5.json,
 * described in that folder's README). The worker's mender (an automatic repair, since removed) reset it to the workflow task completed at 145, after
 * declarePlan was accepted (138) and before it completed: the new run kept the acceptance, every later task failed with
 * "ProtocolMessageCommand referenced absent message ID …/request/complete" (from 163 on), and the agent never answered
 * again. The file is that new run; its events before 145 are the old run's.
 */
describe('a reset between an Update\'s acceptance and its completion (kill matrix, issue 20)', () => {
  const stuck = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'kill-matrix-reset-mid-update.history.json'), 'utf8'));
  const events: { eventId: string; eventType: string; [k: string]: unknown }[] = stuck.events;
  const before = events.filter((e) => Number(e.eventId) < 145);
  // The old run as the repair read it: its task completed at 145, and replay parting from it at the next event.
  const oldRun = [...before, { eventId: '145', eventType: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED', workflowTaskCompletedEventAttributes: {} }];
  const parted = 'Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 146, WorkflowPropertiesModified)';

  it('is what the evidence shows: the run kept an accepted declarePlan with no completion, and failed every task after', () => {
    const accepted = before.find((e) => e.eventId === '138') as unknown as { workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { input: { name: string } } } };
    expect(accepted.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest.input.name).toBe('declarePlan');
    expect(events.some((e) => (e.workflowExecutionUpdateCompletedEventAttributes as { acceptedEventId?: string } | undefined)?.acceptedEventId === '138')).toBe(false);
    const failures = events.filter((e) => e.workflowTaskFailedEventAttributes).map((e) => (e.workflowTaskFailedEventAttributes as { cause: string }).cause);
    expect(failures.filter((c) => c === 'WORKFLOW_TASK_FAILED_CAUSE_BAD_UPDATE_WORKFLOW_EXECUTION_MESSAGE').length).toBeGreaterThanOrEqual(10);
  });

  it('now resets to the last task with no Update in flight, before the acceptance', () => {
    expect(resetEventId(oldRun, parted)).toBe(136);
    // With the Update completed before the point, the point is the last task again.
    const completed = { eventId: '139.5', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED', workflowExecutionUpdateCompletedEventAttributes: { acceptedEventId: '138' } };
    const done = [...before.filter((e) => Number(e.eventId) <= 139), completed, ...oldRun.filter((e) => Number(e.eventId) > 139)];
    expect(resetEventId(done, parted)).toBe(145);
  });
});

/**
 * Another agent of the same kill matrix (copied from shared/evidence/kill-matrix/broken-ag_f6aaaf8b5195.json). Its
 * workflow task started at 365, right after the one that accepted an Update (363), reported the same history size as
 * the task before (107872 bytes at 361 and at 365): the Query guard took it for events a Query had brought and failed
 * a real task with the Update in flight (366), and the workflow went on to fail replay at 384. The guard now only
 * marks such an instance suspect and refuses the Query that would follow; a real task is never failed.
 */
describe('the Query guard on a real task with an unchanged history size (kill matrix, issue 20)', () => {
  const h = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'kill-matrix-guard-misfire.history.json'), 'utf8'));
  const events: { eventId: string; workflowTaskStartedEventAttributes?: { historySizeBytes?: string } }[] = h.events;
  const started = events.filter((e) => e.workflowTaskStartedEventAttributes && Number(e.eventId) <= 365);
  const task = (e: (typeof started)[number]) => ({ jobs: [{ signalWorkflow: {} }], historyLength: Number(e.eventId), historySizeBytes: Long.fromString(e.workflowTaskStartedEventAttributes!.historySizeBytes ?? '0'), isReplaying: false });
  const query = { jobs: [{ queryWorkflow: {} }], isReplaying: false };
  const activate = (guard: QueryCannotAdvance, activation: object) => guard.activate({ activation, batch: 0 } as never, () => undefined);

  it('is what the evidence shows: two workflow tasks with one size, and the guard failing the second', () => {
    const [a, b] = started.slice(-2);
    expect([a.eventId, b.eventId]).toEqual(['361', '365']);
    expect(a.workflowTaskStartedEventAttributes!.historySizeBytes).toBe(b.workflowTaskStartedEventAttributes!.historySizeBytes);
    const failed = events.find((e) => e.eventId === '366') as unknown as { workflowTaskFailedEventAttributes: { failure: { message: string } } };
    expect(failed.workflowTaskFailedEventAttributes.failure.message).toBe(QUERY_REFUSED);
  });

  it('runs every one of those tasks, and refuses a Query after the suspect one until a task brings a new size', () => {
    const guard = new QueryCannotAdvance();
    for (const e of started) expect(() => activate(guard, task(e))).not.toThrow();
    expect(() => activate(guard, query)).toThrow(QUERY_REFUSED);
    activate(guard, { ...task(started.at(-1)!), historyLength: 369, historySizeBytes: Long.fromNumber(109557) });
    expect(() => activate(guard, query)).not.toThrow();
  });

  it('still refuses the Query whose own task brought the events (the hazard the guard is for)', () => {
    const guard = new QueryCannotAdvance();
    const first = started[started.length - 2];
    activate(guard, task(first));
    expect(() => activate(guard, query)).not.toThrow();
    // A timer fired and an activity finished while no task ran: the Query's task brings them, with the last task's size.
    activate(guard, { ...task(first), jobs: [{ fireTimer: {} }], historyLength: Number(first.eventId) + 4 });
    expect(() => activate(guard, query)).toThrow(QUERY_REFUSED);
  });
});


/**
 * One more agent of the kill matrix (copied from shared/evidence/kill-matrix/hist-ag_80b0b3729fe9-run1.json), on a
 * worker nobody killed: declarePlan awaited a local activity (the plan file). The task that accepted it (80) recorded
 * the activity's marker (82), yet the handler went on only in the next task (87), after the event writer's memo upsert
 * (88). Replay resolves a marker in the task that recorded it, so it completes the Update earlier, and failed with
 * `Update machine does not handle this event: HistoryEvent(id: 88, WorkflowPropertiesModified)`. Plan files are now
 * written by regular activities, whose results are events of their own and resume a handler at the same point live
 * and in replay.
 */
describe('an Update that awaits a local activity (kill matrix, issue 20)', () => {
  it('is what the evidence shows: the marker in the accepting task, the completion a task later, after a memo upsert', () => {
    const h = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'kill-matrix-local-activity-in-update.history.json'), 'utf8'));
    const plan = updateWindows(h.events).find((u) => u.name === 'declarePlan')!;
    expect(plan.window.map((e) => `${e.eventId} ${e.eventType.replace('EVENT_TYPE_', '')}`)).toEqual([
      '82 MARKER_RECORDED',
      '83 ACTIVITY_TASK_STARTED',
      '84 ACTIVITY_TASK_COMPLETED',
      '85 WORKFLOW_TASK_SCHEDULED',
      '86 WORKFLOW_TASK_STARTED',
      '87 WORKFLOW_TASK_COMPLETED',
      '88 WORKFLOW_PROPERTIES_MODIFIED',
    ]);
    expect(plan.window[0].markerRecordedEventAttributes.markerName).toBe('core_local_activity');
  });

  it('no longer happens: in every recorded history, plan and team Updates await a regular activity, and no Update a local one', () => {
    const windows = [...recordedSet().values()].flatMap(updateWindows);
    // spawn_agent's Update answers in the task that accepts it and awaits nothing (test/replay/shapes.test.ts).
    const step: Record<string, string> = { declarePlan: 'writePlanFile', removePlan: 'retirePlanFile', createTeam: 'prepareSpawn' };
    const stepped = windows.filter((u) => u.name in step);
    expect(new Set(stepped.map((u) => u.name))).toEqual(new Set(Object.keys(step)));
    for (const { name, window } of stepped) {
      const scheduled = window.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes.activityType.name);
      expect({ name, scheduled }).toEqual({ name, scheduled: expect.arrayContaining([step[name]]) });
    }
    expect(windows.length).toBeGreaterThan(stepped.length);
    for (const { name, window } of windows) {
      expect({ name, markers: window.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length }).toEqual({ name, markers: 0 });
    }
  });
});
