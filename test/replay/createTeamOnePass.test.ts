import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';
import { projectRoot } from '../support/processes';
import { countOf, patchIds, recordedSet, scheduledActivities, updateWindows, type HistoryEvent } from '../support/historyShape';

/**
 * create_team before one pass: a root agent from the recorded set of
 * e01d661, whose create_team of two checked each member's skill again with
 * an activity of its own (`skillExists`) and registered each with a signal
 * of its own. Runs like it replay the old path (no `members-in-one-pass`
 * marker), so today's code must still take it for them; the recorded set,
 * recorded again since, holds only the new one. docs/decisions.md,
 * "Retries and half-made teams".
 */
const raw = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'create-team-before-one-pass.history.json'), 'utf8'));

/** Each createTeam Update's events, between its acceptance and its completion. */
const createTeams = (events: HistoryEvent[]): HistoryEvent[][] => updateWindows(events).flatMap((u) => (u.name === 'createTeam' ? [u.window] : []));

it('has the old shape: a skill check and a registration signal per member, and no one-pass marker', () => {
  const [team] = createTeams(raw.events);
  expect(scheduledActivities(team).filter((name) => name === 'skillExists')).toHaveLength(2);
  expect(countOf(team, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED')).toBe(2);
  // The leader's new team, then each member's registration, then the reservation given back.
  expect(countOf(team, 'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toBe(4);
  expect(patchIds(team)).toEqual([]);
});

it("replays with today's code, which takes the old path for it", async () => {
  await expect(Worker.runReplayHistory(replayOptions({ codePath: readTestEnv().bundlePath }, 'create-team-fixture'), historyFromJSON(raw), 'create-team-before-one-pass')).resolves.toBeUndefined();
});

it('is gone from the recorded set: each create_team there checks skills once, in its one spawn step', () => {
  const teams = [...recordedSet().values()].flatMap(createTeams);
  expect(teams.length).toBeGreaterThan(0);
  // How the members start since (members-started-by-activity): test/replay/membersByActivity.test.ts.
  for (const team of teams) expect(scheduledActivities(team).filter((name) => name === 'skillExists' || name === 'prepareSpawn')).toEqual(['prepareSpawn']);
});
