import fs from 'node:fs';
import path from 'node:path';
import { resetEventId } from '../../src/ops/doctor';
import { projectRoot } from '../support/processes';

/**
 * The crash soak's root agent from a CI run (seed 11): after a worker kill
 * the fresh worker started a workflow task (725) and did not finish it in
 * 10 s (726, timed out), and its next task (741) carried the timed-out
 * task's flush timer (743) ahead of two Update acceptances (744, 745);
 * replay accepts the Updates first. docs/decisions.md, "Mending what a
 * worker crash breaks". Recorded by code since rewritten (its patch markers
 * no longer replay): the history is data for `dipper doctor`'s reading of it.
 */
const RECORDED_FAILURE = 'Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 743, TimerStarted)';
const file = path.join(projectRoot, 'test', 'fixtures', 'histories', 'timed-out-task-before-update.history.json');
const history = JSON.parse(fs.readFileSync(file, 'utf8'));
type Event = { eventId: string; eventType: string; [attributes: string]: unknown };
const event = (id: number): Event => history.events.find((e: Event) => Number(e.eventId) === id);

it('has the shape: a task the fresh worker held past its timeout, then its next task with the Updates', () => {
  const started = (id: number) => (event(id).workflowTaskStartedEventAttributes as { identity: string }).identity;
  expect(started(725)).toBe(started(741));
  expect(event(726).eventType).toBe('EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT');
  expect((event(726).workflowTaskTimedOutEventAttributes as { timeoutType: string }).timeoutType).toBe('TIMEOUT_TYPE_START_TO_CLOSE');
  expect([742, 743, 744, 745].map((id) => event(id).eventType)).toEqual([
    'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
    'EVENT_TYPE_TIMER_STARTED',
    'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
    'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
  ]);
});

it('gives dipper doctor the task whose commands replay disowned as its reset point', () => {
  expect(resetEventId(history.events, RECORDED_FAILURE)).toBe(742);
});
