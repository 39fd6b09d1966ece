import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';
import { projectRoot } from '../support/processes';
import { patchIds, recordedSet, scheduledActivities, signalsSent, taskOfEvent, workflowType, type HistoryEvent } from '../support/historyShape';

/**
 * An ask_user question before its first holder was told at once: a
 * question of the recorded set of 9181cb2 told the asker and the run in its
 * first workflow task and its first holder (systemMessage) only in a later
 * one, after the run's signal had been delivered: a round trip more before
 * the holder's inbox had it. Runs like it replay that path (no
 * `question-routed-at-once` marker); the recorded set, recorded again
 * since, holds only the new one. docs/decisions.md, "Questions".
 */
const raw = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'question-routed-after-run-told.history.json'), 'utf8'));

/** The workflow task that sent each of these signals (the first of each name). */
function tasksOfSignals(events: HistoryEvent[], ...names: string[]): (number | undefined)[] {
  return names.map((name) => {
    const sent = events.find((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === name);
    return sent ? taskOfEvent(events, sent) : undefined;
  });
}

it('has the old shape: the first holder told a workflow task after the run, and no marker', () => {
  const [asker, run, holder] = tasksOfSignals(raw.events, 'asking', 'questionOpened', 'systemMessage');
  expect([asker, run]).toEqual([1, 1]);
  expect(holder).toBeGreaterThan(run!);
  expect(patchIds(raw.events)).not.toContain('question-routed-at-once');
});

it("replays with today's code, which takes the old path for it", async () => {
  await expect(Worker.runReplayHistory(replayOptions({ codePath: readTestEnv().bundlePath }, 'question-fixture'), historyFromJSON(raw), 'question-routed-after-run-told')).resolves.toBeUndefined();
});

it('is gone from the recorded set: every question tells its first holder in its first workflow task', () => {
  const questions = [...recordedSet().values()].filter((events) => workflowType(events) === 'questionWorkflow');
  // ask_user's questions (they tell their asker) whose first holder is an agent (the people's are announced instead).
  const toAgents = questions.filter((events) => signalsSent(events).includes('asking') && !scheduledActivities(events).includes('announce'));
  expect(toAgents.length).toBeGreaterThan(0);
  for (const events of questions) expect(patchIds(events)).toContain('question-routed-at-once');
  for (const events of toAgents) {
    const [opened, told] = tasksOfSignals(events, 'questionOpened', 'systemMessage');
    // A long question goes to the holder as a reference: the routing starts with keeping its words, in that task.
    const kept = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'keepTexts');
    expect({ opened, routedIn: kept ? taskOfEvent(events, kept) : told }).toEqual({ opened: 1, routedIn: 1 });
  }
});
