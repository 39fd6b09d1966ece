import type { Rules, Text } from '../../src/common/pure/content';
import { ActivityFailure, ApplicationFailure, uuid4, workflowInfo } from '@temporalio/workflow';
import { agentName, agentWorkflowId, runWorkflowId } from '../ids';
import { tell } from '../signals';
import { peersChangedSignal, releaseSpawnsSignal, type PeerChange } from '../run/messages';
import { refuse } from '../errors';
import { leaderEndedSignal, runEndedSignal } from './messages';
import type { ChildRecord, MembersStarted, MembersToStart, PeerEntry, SpawnAnnounce, SpawnMade } from '../types';
import type { AgentIdentity } from '../../src/common/launchPayload';
import { callSteps } from '../host';
import type { AgentData, AgentState } from './state';

export type TeamRec = AgentData['teams'][number];

/** What a spawn asks for before it starts anyone (activities/spawn.ts). */
export interface SpawnPlan {
  skills: string[];
  /** The field an unknown skill is reported on. */
  field: string;
  /** A team this spawn makes (its id) or the existing team it adds to. */
  team: { newTeamId: string } | { existing: TeamRec };
  /** A plan task, whose artifacts folder is made. */
  taskId?: string;
  /** Members the step registers and starts too (memberStarts below). */
  start?: MembersToStart;
  /** Whom the step tells once its members run (a spawn_agent answered early). */
  announce?: SpawnAnnounce;
  /** True once the leader has recorded the members from the step's own word: a step that fails after it ends none. */
  recorded?: () => boolean;
}

export interface Prepared extends SpawnMade {
  /** Room held in the run, to give back when the spawn ends (releaseSpawns). */
  reservation: string;
}

/** The step's refusals, all made before it reserved or made anything. */
const REFUSALS = ['unknown_skill', 'invalid_input', 'quota_exceeded', 'run_ended'];

/**
 * Checks the skills, asks the run for room (its quotas: agents per run,
 * spawns in flight, spawn rate) and makes the folders, in one regular
 * activity. Refused with the run's own error or `unknown_skill`, which
 * becomes the tool's. The reservation's id is chosen here: an attempt that
 * reserved and was then lost is found again by the next, and a step that
 * fails after reserving gives it back.
 */
export async function prepareSpawn(s: AgentState, plan: SpawnPlan, reservation = uuid4()): Promise<Prepared> {
  // Releases this leader sent whose signals may still be on their way: the run applies them before it judges.
  const releases = s.data.released ?? [];
  try {
    const prepared = await callSteps(s.id.host).prepareSpawn({
      runId: s.id.runId,
      skills: plan.skills,
      count: plan.skills.length,
      reservation_id: reservation,
      ...(releases.length > 0 ? { releases } : {}),
      ...('newTeamId' in plan.team ? { newTeam: { teamId: plan.team.newTeamId, leaderId: s.id.agentId } } : { workspacePath: plan.team.existing.workspace_path }),
      ...(plan.taskId !== undefined ? { taskId: plan.taskId } : {}),
      ...(plan.start ? { start: plan.start } : {}),
      ...(plan.announce ? { announce: plan.announce } : {}),
    });
    // Only those it carried: one given back meanwhile (a spawn running beside this one) waits for the next.
    s.data.released = (s.data.released ?? []).filter((r) => !releases.includes(r));
    return { reservation, ...prepared };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && REFUSALS.includes(cause.type ?? '')) {
      const details = (cause.details?.[0] ?? {}) as Record<string, unknown>;
      if (cause.type === 'unknown_skill') throw refuse('unknown_skill', cause.message, { field: plan.field, skill: details.skill });
      throw refuse(cause.type!, cause.message, details);
    }
    // Its members run and the leader has them (the step said so before it failed): they stay, with their room.
    if (plan.recorded?.()) {
      await releaseSpawns(s, reservation, plan.start?.members.length ?? 0);
      throw err;
    }
    // Failed past its checks, perhaps holding room: given back (the run ignores a reservation it never made).
    await releaseSpawns(s, reservation, 0);
    // And perhaps having started some of its members: no ghost is left (a member never started is not there to tell).
    if (plan.start) await forgetStarts(s, plan.start);
    throw err;
  }
}

/** Ends the members a failed step may have started, and takes them (and a new team) out of the run's directory. */
async function forgetStarts(s: AgentState, start: MembersToStart): Promise<void> {
  const ids = start.members.map((m) => m.identity.agentId);
  const changes: PeerChange[] = [...ids.map((agent_id) => ({ agent_id, remove: true as const })), ...(start.before.length > 0 ? [leadsTeams(s)] : [])];
  await Promise.all([...ids.map((id) => tell(agentWorkflowId(s.id.runId, id), leaderEndedSignal)), tell(runWorkflowId(s.id.runId), peersChangedSignal, { changes })]);
}

/** Enough for every spawn a leader can have in flight between two reservations that succeed. */
const MAX_RELEASES_CARRIED = 32;

/**
 * Gives the reservation back (null: none was made). The signal's delivery
 * is not waited for, so the call's answer goes out in the same workflow
 * task: once the command is in history the server delivers it (or the run
 * has closed, and nothing is left to release).
 */
export async function releaseSpawns(s: AgentState, reservation: string | null, spawned: number): Promise<void> {
  if (reservation === null) return;
  void tell(runWorkflowId(s.id.runId), releaseSpawnsSignal, { reservation_id: reservation, spawned });
  // Not waited for: the next reservation carries it too, so this leader's next spawn never meets its own finished one.
  s.data.released = [...(s.data.released ?? []), { reservation_id: reservation, spawned }].slice(-MAX_RELEASES_CARRIED);
}

export interface MemberSpec {
  role: string;
  skill: string;
  model?: string;
  description: Text;
  planTaskId?: string;
  /** The task text; for plan tasks it follows the [TASK ASSIGNMENT] block. */
  task: Text;
  rules: Rules;
}

/** The run's directory entry of this leader, told which teams it leads now (and `newTeamId`, about to be made). */
export function leadsTeams(s: AgentState, newTeamId?: string): PeerChange {
  const teams = s.data.teams.map((t) => t.team_id);
  return { agent_id: s.id.agentId, patch: { is_leader_of: newTeamId ? [...teams, newTeamId] : teams } };
}

/** Records a team whose folder prepareSpawn made; the run hears its leader leads it from the step (leadsTeams in `before`). */
export function newTeam(s: AgentState, teamId: string, workspacePath: string, name: string, rules: Rules, task?: Text): TeamRec {
  const team: TeamRec = { team_id: teamId, name, rules, members: [], workspace_path: workspacePath, ...(task ? { task } : {}) };
  s.data.teams.push(team);
  s.events.emit('team_created', { team_id: teamId, name, leader_id: s.id.agentId, depth: s.id.depth + 1 });
  return team;
}

/**
 * A member about to start, before its folders are made (the spawn's step makes them and fills them in): what the
 * leader records, what the run's directory registers, what its workflow gets.
 */
export interface Described {
  agentId: string;
  identity: Omit<AgentIdentity, 'workspacePath' | 'artifactsPath'>;
  entry: PeerEntry;
  spec: MemberSpec;
}

export function describeMember(s: AgentState, teamId: string, spec: MemberSpec, agentId: string): Described {
  const depth = s.id.depth + 1;
  const identity = {
    runId: s.id.runId,
    agentId,
    name: agentName(spec.role, agentId),
    role: spec.role,
    skill: spec.skill,
    ...(spec.model ? { model: spec.model } : {}),
    teamId,
    leaderId: s.id.agentId,
    depth,
    ...(spec.planTaskId ? { planTaskId: spec.planTaskId } : {}),
    // Members live on their leader's host, with the team folder.
    ...(s.id.host ? { host: s.id.host } : {}),
  };
  const entry: PeerEntry = {
    agent_id: agentId,
    name: identity.name,
    role: spec.role,
    team_id: teamId,
    leader_id: s.id.agentId,
    status: 'active',
    is_leader_of: [],
    depth,
  };
  return { agentId, identity, entry, spec };
}

/** The member's child record and its place in its team. */
function keepMember(s: AgentState, team: TeamRec, { agentId, identity, spec }: Described): void {
  const child: ChildRecord = {
    agent_id: agentId,
    name: identity.name,
    role: spec.role,
    skill: spec.skill,
    team_id: team.team_id,
    ...(spec.planTaskId ? { plan_task_id: spec.planTaskId } : {}),
    status: 'active',
    review_pending: false,
    review_pending_ts: null,
    summary: '',
    termination_requested: false,
    terminate_posted: false,
  };
  s.data.children[agentId] = child;
  team.members.push(agentId);
}

/** What prepareSpawn needs to register and start these members (activities/memberStarts.ts). */
export function startsOf(s: AgentState, members: Described[], runTask: Text, before: PeerChange[], teamSizeBefore: number): MembersToStart {
  return {
    members: members.map(({ identity, entry, spec }) => ({
      identity,
      entry,
      // The run's task, which every create_team member is given, goes once rather than once a member.
      ...(spec.task === runTask ? {} : { task: spec.task }),
      roleDescription: spec.description,
      rules: spec.rules,
    })),
    taskQueue: workflowInfo().taskQueue,
    taskTimeoutMs: workflowInfo().taskTimeoutMs,
    limits: s.limits,
    runTask,
    before: before.map((c) => ({ agent_id: c.agent_id, patch: c.patch ?? {} })),
    teamSizeBefore,
  };
}

/**
 * After prepareSpawn started them: the members that started are recorded
 * in the leader's state and its log; a run that closed, or a leader that
 * ended, meanwhile is told to them. Returns the members the server refused
 * (they left the directory). Synchronous, so a handler that records them
 * has done so before the next job of its activation runs (a spawn's
 * validator behind the step's word, which would otherwise still see the
 * spawn lock held); the signals go out with the task either way.
 */
export function keepStarted(s: AgentState, team: TeamRec, members: Described[], started: MembersStarted): string[] {
  const kept = members.filter((d) => !started.refused.includes(d.agentId));
  for (const d of kept) keepMember(s, team, d);
  if (!started.registered) for (const d of kept) void tell(agentWorkflowId(s.id.runId, d.agentId), runEndedSignal);
  // The leader ended while the step ran, and told its subtree before these were in it: they end with it.
  else if (s.data.subtree_told) for (const d of kept) void tell(agentWorkflowId(s.id.runId, d.agentId), leaderEndedSignal);
  for (const d of kept) spawned(s, d);
  return started.refused;
}

/** The member started: its leader's log says so. */
function spawned(s: AgentState, { agentId, identity, spec, entry }: Described): void {
  s.events.emit('agent_spawned', {
    agent_id: agentId,
    name: identity.name,
    role: spec.role,
    skill: spec.skill,
    team_id: entry.team_id,
    leader_id: s.id.agentId,
    depth: entry.depth,
    plan_task_id: spec.planTaskId ?? null,
  });
  if (entry.depth > s.limits.depthWarningAbove) s.events.emit('depth_warning', { agent_id: agentId, depth: entry.depth });
}

/** Drops members from the leader's records (children, their team). */
function forget(s: AgentState, team: TeamRec, agentIds: string[]): void {
  for (const id of agentIds) delete s.data.children[id];
  team.members = team.members.filter((id) => !agentIds.includes(id));
}

/**
 * Takes back a team whose members could not all start: the ones that did
 * are ended (they stop their runtimes and lose their tokens, as any agent
 * whose leader ended), leave the run's directory and the leader's records,
 * and the team is dropped. `team_rolled_back` records it.
 */
export async function undoTeam(s: AgentState, team: TeamRec, started: string[], reason: string): Promise<void> {
  forget(s, team, started);
  s.data.teams = s.data.teams.filter((t) => t.team_id !== team.team_id);
  s.events.emit('team_rolled_back', { team_id: team.team_id, agent_ids: started, message: reason });
  const changes: PeerChange[] = [...started.map((agent_id) => ({ agent_id, remove: true as const })), leadsTeams(s)];
  await Promise.all([...started.map((id) => tell(agentWorkflowId(s.id.runId, id), leaderEndedSignal)), tell(runWorkflowId(s.id.runId), peersChangedSignal, { changes })]);
}
