import { prefixed, type Rules, type Text } from '../content';
import { ActivityFailure, ApplicationFailure, ParentClosePolicy, proxyLocalActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { agentWorkflowId, runWorkflowId } from '../ids';
import { tell } from '../signals';
import { peerChangedSignal, releaseSpawnsSignal } from '../run/messages';
import { failureText, refuse } from '../errors';
import { leaderEndedSignal, runEndedSignal } from './messages';
import { agentIdKey, leaderIdKey, roleKey, runIdKey, statusKey } from '../searchAttributes';
import type { AgentIdentity, ChildRecord } from '../types';
import { CALL_STEP, onHost } from '../host';
import { agentSummary } from '../summaries';
import { slug } from './leader';
import { newId, type AgentData, type AgentState } from './state';
// A cycle (the agent workflow spawns agents), read only when a spawn runs: both modules are loaded by then.
import { agentWorkflow } from './workflow';

export type TeamRec = AgentData['teams'][number];

// Inside a tool call: five attempts within about 3 s, so a failing step answers well inside the call's deadline.
const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '15s', retry: { maximumAttempts: 5, initialInterval: '200ms' } });

/**
 * A local activity: the reservation (one Update on the run) is made inside
 * the spawn's own workflow task, not scheduled through the server and
 * answered in another, which took a spawn from ~150 to ~300 ms.
 */
const quota = proxyLocalActivities<Activities>({ startToCloseTimeout: '15s', retry: { maximumAttempts: 5, initialInterval: '200ms' } });

/**
 * Asks the run for room to spawn `count` agents (its quotas: agents per run,
 * spawns in flight, spawn rate). Refused with the run's own error, which
 * becomes the tool's. Returns the reservation to release when the spawn
 * ends.
 */
export async function reserveSpawns(s: AgentState, count: number): Promise<string> {
  // Releases this leader sent whose signals may still be on their way: the run applies them before it judges.
  const releases = s.data.released ?? [];
  try {
    const { reservation_id } = await quota.reserveSpawns({ runId: s.id.runId, count, ...(releases.length > 0 ? { releases } : {}) });
    // Only those it carried: one given back meanwhile (a spawn running beside this one) waits for the next.
    s.data.released = (s.data.released ?? []).filter((r) => !releases.includes(r));
    return reservation_id;
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && (cause.type === 'quota_exceeded' || cause.type === 'run_ended')) {
      throw refuse(cause.type, cause.message, (cause.details?.[0] ?? {}) as Record<string, unknown>);
    }
    throw err;
  }
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

export async function newTeam(s: AgentState, name: string, rules: Rules, task?: Text): Promise<TeamRec> {
  const teamId = newId('tm');
  const workspacePath = await onHost(s.id.host, local, CALL_STEP).provisionTeamWorkspace({ runId: s.id.runId, teamId, leaderId: s.id.agentId });
  const team: TeamRec = { team_id: teamId, name, rules, members: [], workspace_path: workspacePath, ...(task ? { task } : {}) };
  s.data.teams.push(team);
  s.events.emit('team_created', { team_id: teamId, name, leader_id: s.id.agentId, depth: s.id.depth + 1 });
  await tell(runWorkflowId(s.id.runId), peerChangedSignal, {
    agent_id: s.id.agentId,
    patch: { is_leader_of: s.data.teams.map((t) => t.team_id) },
  });
  return team;
}

export function assignmentMessage(planTaskId: string, artifactsPath: string, task: Text): Text {
  return prefixed(`[TASK ASSIGNMENT]\nplan_task_id: ${planTaskId}\nartifacts_path: ${artifactsPath}\n[/TASK ASSIGNMENT]\n\n`, task);
}

/**
 * Starts one member's lifecycle: registers it with the run's directory and
 * starts its workflow. The member reports status changes only after tool
 * calls, which need the spawn result first, so the directory always hears
 * of the registration before any report.
 */
export async function launchMember(s: AgentState, team: TeamRec, spec: MemberSpec, runTask: Text, presetId?: string): Promise<string> {
  const agentId = presetId ?? newId('ag');
  const depth = s.id.depth + 1;
  const artifactsPath = spec.planTaskId
    ? await onHost(s.id.host, local, CALL_STEP).provisionArtifacts({ workspacePath: team.workspace_path, taskId: spec.planTaskId })
    : undefined;
  const identity: AgentIdentity = {
    runId: s.id.runId,
    agentId,
    name: `${slug(spec.role)}-${agentId.slice(3, 7)}`,
    role: spec.role,
    skill: spec.skill,
    ...(spec.model ? { model: spec.model } : {}),
    teamId: team.team_id,
    leaderId: s.id.agentId,
    depth,
    ...(spec.planTaskId ? { planTaskId: spec.planTaskId } : {}),
    workspacePath: team.workspace_path,
    ...(artifactsPath ? { artifactsPath } : {}),
    // Members live on their leader's host, with the team folder.
    ...(s.id.host ? { host: s.id.host } : {}),
  };
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
  const register = tell(runWorkflowId(s.id.runId), peerChangedSignal, {
    agent_id: agentId,
    entry: {
      agent_id: agentId,
      name: identity.name,
      role: spec.role,
      team_id: team.team_id,
      leader_id: s.id.agentId,
      status: 'active',
      is_leader_of: [],
      depth,
    },
  });
  const firstMessage = spec.planTaskId && artifactsPath ? assignmentMessage(spec.planTaskId, artifactsPath, spec.task) : spec.task;
  const start = startChild(agentWorkflow, {
    workflowId: agentWorkflowId(s.id.runId, agentId),
    parentClosePolicy: ParentClosePolicy.ABANDON,
    args: [{ identity, limits: s.limits, runTask, launch: { firstMessage, roleDescription: spec.description, rules: spec.rules } }],
    // Read in the Temporal UI.
    ...agentSummary(identity, spec.task),
    typedSearchAttributes: [
      { key: runIdKey, value: s.id.runId },
      { key: agentIdKey, value: agentId },
      { key: roleKey, value: spec.role },
      { key: leaderIdKey, value: s.id.agentId },
      { key: statusKey, value: 'active' },
    ],
  });
  // Both in one round trip: the member cannot report anything before its spawn call has returned.
  const [reg, started] = await Promise.allSettled([register, start]);
  if (started.status === 'rejected') {
    // No ghost: a member that never started leaves neither a record nor a directory entry.
    forget(s, team, [agentId]);
    await tell(runWorkflowId(s.id.runId), peerChangedSignal, { agent_id: agentId, remove: true });
    throw started.reason;
  }
  const registered = reg.status === 'fulfilled' && reg.value;
  // The run ended while this member was being spawned: it ends with it.
  if (!registered) await tell(agentWorkflowId(s.id.runId, agentId), runEndedSignal);
  s.events.emit('agent_spawned', {
    agent_id: agentId,
    name: identity.name,
    role: spec.role,
    skill: spec.skill,
    team_id: team.team_id,
    leader_id: s.id.agentId,
    depth,
    plan_task_id: spec.planTaskId ?? null,
  });
  if (depth > s.limits.depthWarningAbove) s.events.emit('depth_warning', { agent_id: agentId, depth });
  return agentId;
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
export async function undoTeam(s: AgentState, team: TeamRec, started: string[], reason: unknown): Promise<void> {
  forget(s, team, started);
  s.data.teams = s.data.teams.filter((t) => t.team_id !== team.team_id);
  s.events.emit('team_rolled_back', { team_id: team.team_id, agent_ids: started, message: failureText(reason) });
  const run = runWorkflowId(s.id.runId);
  await Promise.all([
    ...started.map((id) => tell(agentWorkflowId(s.id.runId, id), leaderEndedSignal)),
    ...started.map((id) => tell(run, peerChangedSignal, { agent_id: id, remove: true })),
    tell(run, peerChangedSignal, { agent_id: s.id.agentId, patch: { is_leader_of: s.data.teams.map((t) => t.team_id) } }),
  ]);
}
