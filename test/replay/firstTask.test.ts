import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';
import { projectRoot } from '../support/processes';
import { FIRST_TASK_MARK } from '../../workflows/interceptors';

/**
 * An agent's run from the crash soak (seed 120840 of 954bc7d, histories
 * continued as new at 800 events): the run continued as new just before a
 * worker kill, its first task (2-4) issued no command, an Update's task (5)
 * waited on the dead worker's sticky queue until it timed out (6), and the
 * fresh worker took the next (7-8) built from history: the workflow's start
 * and three Updates in one activation. Replay starts the workflow alone and
 * fails at the second Update's completion (16). Cut after the first task
 * replay disowns. docs/decisions.md, "An empty workflow task before an
 * Update"; the SDK's part is reproduced in test/upstream/firstTaskBeforeUpdate.test.ts.
 */
const file = path.join(projectRoot, 'test', 'fixtures', 'histories', 'first-task-before-update.history.json');
const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
const type = (id: number) => String(raw.events.find((e: { eventId: string }) => Number(e.eventId) === id).eventType).replace('EVENT_TYPE_', '');

it('has the shape: a continued run whose first task is empty, then an Update task timed out on a sticky queue', () => {
  expect(raw.events[0].workflowExecutionStartedEventAttributes.initiator).toBe('CONTINUE_AS_NEW_INITIATOR_WORKFLOW');
  expect([4, 5, 6, 7].map(type)).toEqual(['WORKFLOW_TASK_COMPLETED', 'WORKFLOW_TASK_SCHEDULED', 'WORKFLOW_TASK_TIMED_OUT', 'WORKFLOW_TASK_SCHEDULED']);
  expect(raw.events[5].workflowTaskTimedOutEventAttributes.timeoutType).toBe('TIMEOUT_TYPE_SCHEDULE_TO_START');
  expect([10, 11, 12].map(type)).toEqual(Array(3).fill('WORKFLOW_EXECUTION_UPDATE_ACCEPTED'));
  expect([15, 16, 17].map(type)).toEqual(['WORKFLOW_EXECUTION_UPDATE_COMPLETED', 'WORKFLOW_EXECUTION_UPDATE_COMPLETED', 'TIMER_STARTED']);
});

it("does not replay with today's code either: a run without the first task's marker takes the path it took", async () => {
  const history = historyFromJSON(raw);
  const failure = await Worker.runReplayHistory(replayOptions({ codePath: readTestEnv().bundlePath }, 'first-task-fixture'), history, 'first-task-before-update').then(
    () => undefined,
    (err: unknown) => String((err as Error).message),
  );
  expect(failure).toMatch(/Timer machine does not handle this event: HistoryEvent\(id: 16, WorkflowExecutionUpdateCompleted\)/);
});

it("every recorded run's first workflow task issues a command: the first task's marker (FIRST_TASK_MARK)", () => {
  const dir = path.join(__dirname, 'histories');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  expect(files.length).toBeGreaterThan(20);
  const firstAfterTask = files.map((f) => {
    const events = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).events as { eventType: string; markerRecordedEventAttributes?: { details?: Record<string, { payloads?: { data?: string }[] }> } }[];
    const completed = events.findIndex((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    const next = events[completed + 1];
    const data = next?.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return { file: f, next: next?.eventType, patch: data ? JSON.parse(Buffer.from(data, 'base64').toString('utf8')).id : undefined };
  });
  expect(firstAfterTask.filter((h) => h.next !== 'EVENT_TYPE_MARKER_RECORDED' || h.patch !== FIRST_TASK_MARK)).toEqual([]);
});
