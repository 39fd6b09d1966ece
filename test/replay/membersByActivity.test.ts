import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';
import { projectRoot } from '../support/processes';
import { countOf, patchIds, recordedSet, scheduledActivities, updateWindows, type HistoryEvent } from '../support/historyShape';

/**
 * Members started as child workflows: a root agent from the recorded set of
 * d6ba408, whose spawn_agent and create_team calls started each member with
 * a child workflow start and answered a workflow task after the server said
 * it had started. Runs like it replay that path (no
 * `members-started-by-activity` marker); since the marker, prepareSpawn
 * registers and starts the members itself and the call answers in the
 * workflow task that hears it return. docs/decisions.md, "Members started
 * by the spawn's step".
 */
const raw = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'members-by-child-start.history.json'), 'utf8'));
const MARKER = 'members-started-by-activity';

const spawnsOf = (events: HistoryEvent[]) => updateWindows(events).filter((u) => u.name === 'spawnAgent' || u.name === 'createTeam');

/** Workflow tasks completed from the spawn step's end to the Update's completion (the window's end). */
const tasksAfterStep = (window: HistoryEvent[]): number => {
  const scheduled = window.find((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'prepareSpawn');
  const step = window.findIndex((e) => e.activityTaskCompletedEventAttributes && e.activityTaskCompletedEventAttributes.scheduledEventId === scheduled?.eventId);
  expect(step).toBeGreaterThanOrEqual(0);
  return countOf(window.slice(step), 'WORKFLOW_TASK_COMPLETED');
};

it('has the old shape: each member a child workflow start, heard of a workflow task later', () => {
  const spawns = spawnsOf(raw.events);
  expect(spawns.map((u) => u.name).sort()).toEqual(['createTeam', 'spawnAgent', 'spawnAgent', 'spawnAgent']);
  for (const { name, window } of spawns) {
    expect(patchIds(window)).not.toContain(MARKER);
    expect(countOf(window, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED')).toBe(name === 'createTeam' ? 2 : 1);
    expect(countOf(window, 'CHILD_WORKFLOW_EXECUTION_STARTED')).toBe(name === 'createTeam' ? 2 : 1);
    // The task that started the member, then at least one that heard it had started.
    expect(tasksAfterStep(window)).toBeGreaterThanOrEqual(2);
  }
});

it("replays with today's code, which takes the old path for it", async () => {
  await expect(Worker.runReplayHistory(replayOptions({ codePath: readTestEnv().bundlePath }, 'members-fixture'), historyFromJSON(raw), 'members-by-child-start')).resolves.toBeUndefined();
});

it('is gone from the recorded set: the spawn step starts the members, and the call answers in the task that hears it', () => {
  const leaders = [...recordedSet().values()].filter((events) => spawnsOf(events).length > 0);
  const spawns = leaders.flatMap(spawnsOf);
  expect(spawns.filter((u) => u.name === 'spawnAgent').length).toBeGreaterThan(0);
  expect(spawns.filter((u) => u.name === 'createTeam').length).toBeGreaterThan(0);
  // A marker is recorded once a workflow, at its first spawn.
  for (const events of leaders) expect(patchIds(events)).toContain(MARKER);
  // Events are written beside the call by their own activity (workflows/events.ts), whenever a batch is due.
  for (const { window } of spawns) {
    expect({
      steps: scheduledActivities(window).filter((name) => name !== 'recordEvents'),
      childStarts: countOf(window, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED'),
      tasksAfterStep: tasksAfterStep(window),
    }).toEqual({ steps: ['prepareSpawn'], childStarts: 0, tasksAfterStep: 1 });
  }
});
