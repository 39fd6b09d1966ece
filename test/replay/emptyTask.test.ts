import fs from 'node:fs';
import path from 'node:path';
import { resetEventId } from '../../src/ops/doctor';
import { projectRoot } from '../support/processes';

/**
 * An agent's history from the crash soak (seed 6 of a 10-seed run, before
 * the fix): a task with no commands (539-540), then one that only learned
 * an event write finished (544-545, also empty), then an Update's task a
 * fresh worker took after a kill (549). That worker grouped the write's
 * completion with the Update and scheduled the next write before the
 * Update completed (551-553); replay groups them apart. docs/decisions.md,
 * "An empty workflow task before an Update". Recorded by code since
 * rewritten (its patch markers no longer replay): the history is data for
 * the doctor's reading of it.
 */
const file = path.join(projectRoot, 'test', 'fixtures', 'histories', 'empty-task-before-update.history.json');
const history = JSON.parse(fs.readFileSync(file, 'utf8'));

it('has the shape: an empty task, an empty write-completion task, then the Update\'s task at once', () => {
  const type = (id: number) => String(history.events.find((e: { eventId: string }) => Number(e.eventId) === id).eventType);
  expect([540, 545, 546].map(type)).toEqual(['EVENT_TYPE_WORKFLOW_TASK_COMPLETED', 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED', 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED']);
  expect([541, 542].map(type)).toEqual(['EVENT_TYPE_ACTIVITY_TASK_STARTED', 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED']);
});

it('gives the doctor a reset point before the broken task', () => {
  const message = 'Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 552, ActivityTaskScheduled)';
  const at = resetEventId(history.events, message);
  expect(at).toBeDefined();
  expect(at!).toBeLessThan(552);
});
