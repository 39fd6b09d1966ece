import { ApplicationFailure } from '@temporalio/common';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isTaskId, paths, TASK_ID } from '../src/paths';
import { updateFailureOf } from '../src/temporal';
import { agentWorkflowId, runWorkflowId, spawnWakes } from '../workflows/ids';
import { spawnStartedSignal } from '../workflows/agent/messages';
import { reserveSpawnsUpdate, type ReserveRequest } from '../workflows/run/messages';
import { onDisk } from './diskFailure';
import { startMembers } from './memberStarts';
import type { MembersToStart, SpawnAnnounce, SpawnMade } from '../workflows/types';
import type { ActivityDeps } from './index';
import { WORKER_WAKES } from '../src/common/stores/inboxWakes';

/** What a spawn asks for before its members start (workflows/agent/spawn.ts). */
export interface SpawnAsk extends ReserveRequest {
  runId: string;
  /** Every skill the spawn starts members with, in the caller's order (a refusal names the first missing). */
  skills: string[];
  /** A team made by this spawn: its folder is made here, its leader let in. */
  newTeam?: { teamId: string; leaderId: string };
  /** The existing team's folder, when the spawn adds to one. */
  workspacePath?: string;
  /** A plan task's id: its artifacts folder is made in the team's. */
  taskId?: string;
  /** The members to register and start once the rest is done. */
  start?: MembersToStart;
  /** Told once every member runs: the leader by a signal, then the caller's gateway on the wake feed. */
  announce?: SpawnAnnounce;
}

export type PreparedSpawn = SpawnMade;

const refused = (type: string, message: string, details: Record<string, unknown>) => ApplicationFailure.create({ type, message, details: [details], nonRetryable: true });

/**
 * Everything a spawn needs before its members start, as one activity: the
 * skills checked, room reserved in the run, the new team's folder and the
 * plan task's artifacts folder made. One regular activity, not a local one
 * per step: an Update that awaits a local activity can complete in another
 * workflow task live than in replay (docs/decisions.md, "An Update awaits
 * no local activity"), and one round trip costs less than four. Each part
 * may run again (an attempt lost with a killed worker): the reservation is
 * the caller's id, which the run holds once, and folders are made if
 * missing. Refusals (unknown_skill, invalid_input, quota_exceeded,
 * run_ended) come back as they are, before anything is reserved or made.
 */
export function spawnPreparation(deps: Pick<ActivityDeps, 'config' | 'temporal' | 'skills' | 'accounts' | 'wakes'>) {
  return async function prepareSpawn(ask: SpawnAsk): Promise<PreparedSpawn> {
    if (!ask.announce) return prepare(ask);
    const { leaderId, key } = ask.announce;
    const wakes = spawnWakes(key);
    const announce = (which: string) => deps.wakes?.publish(WORKER_WAKES, [`${ask.runId}/${which}`]).catch(() => undefined);
    try {
      const made = await prepare(ask);
      if (made.started && made.started.refused.length === 0 && made.started.registered) {
        // The leader first, so any call its caller makes once answered finds the member recorded and the spawn over.
        await deps.temporal.handle(agentWorkflowId(ask.runId, leaderId)).signal(spawnStartedSignal, { key, made });
        await announce(wakes.started);
      } else {
        // Refused by the server, or the run closed meanwhile: the leader's answer, not this step's, is the caller's.
        await announce(wakes.failed);
      }
      return made;
    } catch (err) {
      // The gateway stops waiting for the member and asks the leader how the spawn ended (a retry may still start it).
      await announce(wakes.failed);
      throw err;
    }
  };

  async function prepare(ask: SpawnAsk): Promise<PreparedSpawn> {
    const loaded = await Promise.all(ask.skills.map((skill) => deps.skills.load(skill)));
    const missing = loaded.findIndex((skill) => skill === null);
    if (missing >= 0) throw refused('unknown_skill', `Skill "${ask.skills[missing]}" could not be loaded.`, { skill: ask.skills[missing], index: missing });
    // declare_plan checks ids at the gateway; a plan that reached the workflow another way is refused here.
    if (ask.taskId !== undefined && !isTaskId(ask.taskId)) {
      const message = `This task's id cannot name its artifacts folder (it must match ${TASK_ID.source} without ".."); remove_plan and declare the plan again.`;
      throw refused('invalid_input', message, { field: 'task_id' });
    }
    await reserve(ask);
    const workspacePath = ask.newTeam ? await teamWorkspace(ask.runId, ask.newTeam) : ask.workspacePath;
    if (workspacePath === undefined) throw refused('invalid_input', 'A spawn names a new team or an existing team folder.', {});
    const artifactsPath = ask.taskId === undefined ? undefined : await artifacts(workspacePath, ask.taskId);
    const folders = { workspacePath, ...(artifactsPath ? { artifactsPath } : {}) };
    if (!ask.start) return folders;
    const started = await startMembers(deps, ask.runId, ask.start, folders, deps.config.faults.memberStart?.after);
    return { ...folders, started };
  }

  async function reserve({ runId, count, releases, reservation_id }: SpawnAsk): Promise<void> {
    try {
      const request = { count, reservation_id, ...(releases && releases.length > 0 ? { releases } : {}) };
      await deps.temporal.handle(runWorkflowId(runId)).update(reserveSpawnsUpdate, [request]);
    } catch (err) {
      const refusal = updateFailureOf(err);
      if (refusal?.type) throw refused(refusal.type, refusal.message, (refusal.details?.[0] ?? {}) as Record<string, unknown>);
      throw err;
    }
  }

  function teamWorkspace(runId: string, { teamId, leaderId }: { teamId: string; leaderId: string }): Promise<string> {
    return onDisk('provision team workspace', async () => {
      const dir = paths.teamWorkspace(deps.config.dataDir, runId, teamId);
      await fs.mkdir(dir, { recursive: true });
      // Shared before anything is made inside, so what is made inherits the folder's group and ACL.
      deps.accounts?.shareWorkspace(dir, { runId, agentId: leaderId });
      await fs.mkdir(path.join(dir, 'artifacts'), { recursive: true });
      return dir;
    });
  }

  function artifacts(workspacePath: string, taskId: string): Promise<string> {
    return onDisk('provision artifacts', async () => {
      const dir = paths.artifacts(workspacePath, taskId);
      await fs.mkdir(dir, { recursive: true });
      return dir;
    });
  }
}
