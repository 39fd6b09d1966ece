import { callSteps } from '../host';
import { setUpdateOnce } from '../appliedUpdates';
import type { Text } from '../../src/common/pure/content';
import type { PlanTaskSpec } from '../types';
import { condition, setHandler } from '@temporalio/workflow';
import { refuse } from '../errors';
import { agentWorkflowId } from '../ids';
import { tell } from '../signals';
import * as leader from './leader';
import * as m from './messages';
import { buildTasks, readyIds } from './plan';
import { describeMember, keepStarted, leadsTeams, newTeam, prepareSpawn, releaseSpawns, startsOf, undoTeam } from './spawn';
import { callKey, Receipts } from '../receipts';
import { newId, type AgentState } from './state';
import { statusToDirectory } from './statusReport';

/** Receipts of this agent's creating calls. */
function receiptsOf(s: AgentState): Receipts {
  return new Receipts((s.data.receipts ??= { entries: [] }));
}

/** For validators, which may only read: whether this call has already been answered. */
function answered(s: AgentState, key: string): boolean {
  return s.data.receipts !== undefined && new Receipts(s.data.receipts).find(key, Date.now()) !== undefined;
}

/** Handlers for what an agent does as a leader: its plan, its teams, its children. */
export function installLeaderHandlers(s: AgentState, runTask: Text): void {
  // A child's new report or request supersedes the one its leader has not read yet (the spec: call again to
  // supersede), so a child that reports in a loop holds at most one of each in its leader's inbox.
  setHandler(m.childChangedSignal, (change) => {
    const child = leader.childRecord(s, change.agent_id);
    if (!child) return;
    // A numbered change older than one already applied arrived late: its mirror is stale (the inbox item still counts).
    if (change.seq !== undefined && change.seq > (child.seq ?? 0)) Object.assign(child, change.patch, { seq: change.seq });
    if (change.inbox && !s.inbox.has(change.inbox.message_id)) {
      if (change.inbox.kind !== 'system') s.inbox.drop(change.agent_id, change.inbox.kind);
      s.inbox.push(change.inbox.kind, change.agent_id, change.inbox.content, change.inbox.message_id, Date.now());
    }
  });

  setUpdateOnce(
    s.applied,
    m.declarePlanUpdate,
    async ({ tasks }) => {
      s.planBusy = true;
      try {
        const planId = newId('pl');
        const built = buildTasks(tasks);
        // The file is written first; only then does the plan become active.
        const planPath = await callSteps(s.id.host).writePlanFile({ runId: s.id.runId, agentId: s.id.agentId, planId, tasks: built });
        s.data.plan = { plan_id: planId, plan_path: planPath, tasks: built };
        s.events.emit('plan_declared', { plan_id: planId, plan_path: planPath, tasks: built.length, ready: readyIds(built) });
        return {
          plan_id: planId,
          plan_path: planPath,
          tasks: built.map((t) => ({ id: t.id, role: t.role, skill: t.skill, depends_on: t.depends_on, status: t.status })),
        };
      } finally {
        s.planBusy = false;
      }
    },
    { validator: s.validated(({ tasks }: { tasks: PlanTaskSpec[] }) => (leader.checkReviewGate(s, 'declare_plan'), leader.checkDeclarePlan(s, tasks))) },
  );

  setUpdateOnce(
    s.applied,
    m.removePlanUpdate,
    async () => {
      const plan = s.data.plan!;
      s.planBusy = true;
      try {
        const removedPath = await callSteps(s.id.host).retirePlanFile({ planPath: plan.plan_path });
        s.data.plan = null;
        s.events.emit('plan_removed', { plan_id: plan.plan_id, plan_path: removedPath });
        return { removed_plan_id: plan.plan_id };
      } finally {
        s.planBusy = false;
      }
    },
    { validator: s.validated(() => (leader.checkReviewGate(s, 'remove_plan'), leader.checkRemovePlan(s))) },
  );

  setHandler(m.listReadyQuery, () => (s.data.plan ? { ready: readyIds(s.data.plan.tasks) } : null), {
    description: 'Plan tasks ready to spawn (null without a plan).',
  });

  setUpdateOnce(
    s.applied,
    m.spawnAgentUpdate,
    async ({ task_id }) => {
      // Sent again after a lost answer, a spawn meets the spec's own rule: the task is no longer ready (task_not_pending).
      const task = leader.checkSpawn(s, task_id);
      const plan = s.data.plan!;
      // Marked before the first await so a concurrent remove_plan sees the task in flight.
      s.spawnBusy = true;
      task.status = 'in_flight';
      let started = false;
      let reservation: string | null = null;
      try {
        const existing = s.data.teams.find((t) => t.team_id === s.data.spawn_team_id);
        const teamCreated = existing === undefined;
        const teamId = existing?.team_id ?? newId('tm');
        const spec = { role: task.role, skill: task.skill, model: task.model, description: task.description, rules: [] };
        const asked = { skills: [task.skill], field: 'task_id', team: existing ? { existing } : { newTeamId: teamId }, taskId: task.id };
        // One step reserves, makes the folders, registers and starts the member; the leader records it after.
        const member = describeMember(s, teamId, { ...spec, planTaskId: task.id, task: task.task }, newId('ag'));
        const before = teamCreated ? [leadsTeams(s, teamId)] : [];
        const prepared = await prepareSpawn(s, { ...asked, start: startsOf(s, [member], runTask, before, existing?.members.length ?? 0) });
        reservation = prepared.reservation;
        const team = existing ?? newTeam(s, teamId, prepared.workspacePath, `${s.id.name}-team`, []);
        s.data.spawn_team_id = team.team_id;
        if ((await keepStarted(s, team, [member], prepared.started!)).length > 0) {
          throw refuse('unavailable', 'The agent could not be started. Retry shortly.', { retry_after_ms: 1000 });
        }
        const agentId = member.agentId;
        started = true;
        task.agent_id = agentId;
        s.events.emit('task_spawned', { plan_id: plan.plan_id, task_id, agent_id: agentId });
        return {
          agent_id: agentId,
          team_id: team.team_id,
          task_id,
          remaining_ready: leader.remainingReady(s),
          team_created: teamCreated,
        };
      } finally {
        if (!started) task.status = 'ready';
        await releaseSpawns(s, reservation, started ? 1 : 0);
        s.spawnBusy = false;
      }
    },
    { validator: s.validated(({ task_id }: { task_id: string }) => void (leader.checkReviewGate(s, 'spawn_agent'), leader.checkSpawn(s, task_id), leader.checkChildrenRoom(s, 1))) },
  );

  setHandler(
    m.createTeamUpdate,
    async (input) => {
      // The same call sent again (its answer was lost) gets the same team, not a second one.
      const receipts = receiptsOf(s);
      const key = input.call_key ?? callKey('create_team', input);
      // The same call while the first is still starting members (its answer ran late, and the caller repeated it as
      // told): it gets the first call's answer when there is one.
      if (s.createTeamBusy && s.createTeamKey === key) {
        await condition(() => !s.createTeamBusy);
        const first = receipts.find(key, Date.now());
        if (first !== undefined) return first as m.CreateTeamResult;
        throw refuse('unavailable', 'The same create_team, sent before, created nothing. Retry shortly.', { retry_after_ms: 1000 });
      }
      const kept = receipts.find(key, Date.now());
      if (kept !== undefined) return kept as m.CreateTeamResult;
      s.createTeamBusy = true;
      s.createTeamKey = key;
      let reservation: string | null = null;
      let spawned = 0;
      try {
        const teamId = newId('tm');
        const member = (r: m.CreateTeamInput['roles'][number]) => ({ ...r, rules: input.rules ?? [], task: runTask });
        const asked = { skills: input.roles.map((r) => r.skill), field: 'roles', team: { newTeamId: teamId } };
        // All or nothing: if any member cannot start, the ones that did are ended and the team is taken back, so a
        // retry never finds half a team. One step reserves, makes the folder, registers and starts every member; the
        // leader records them after.
        const ids = input.roles.map(() => newId('ag'));
        const members = input.roles.map((r, i) => describeMember(s, teamId, member(r), ids[i]));
        const prepared = await prepareSpawn(s, { ...asked, start: startsOf(s, members, runTask, [leadsTeams(s, teamId)], 0) });
        reservation = prepared.reservation;
        const team = newTeam(s, teamId, prepared.workspacePath, input.name, input.rules ?? [], input.task);
        const refused = await keepStarted(s, team, members, prepared.started!);
        if (refused.length > 0) {
          // A member's own refusal (unknown_skill) came from the step, before anything was made; this is the server's.
          await undoTeam(s, team, ids.filter((id) => !refused.includes(id)), `the server refused ${refused.length} of ${ids.length} members`);
          throw refuse('unavailable', 'Not every member could be started, so the team was taken back and nothing was created. Retry shortly.', {
            retry_after_ms: 1000,
          });
        }
        spawned = ids.length;
        const answer = { team_id: team.team_id, members: ids.map((agent_id, i) => ({ agent_id, role: input.roles[i].role })) };
        receipts.keep(key, answer, Date.now());
        return answer;
      } finally {
        s.createTeamBusy = false;
        s.createTeamKey = null;
        await releaseSpawns(s, reservation, spawned);
      }
    },
    {
      validator: (input) => {
        const key = input.call_key ?? callKey('create_team', input);
        if (answered(s, key) || (s.createTeamBusy && s.createTeamKey === key)) return;
        leader.checkReviewGate(s, 'create_team');
        leader.checkCreateTeam(s, input);
        leader.checkChildrenRoom(s, input.roles.length);
        s.checkEventsWritable();
      },
    },
  );

  setUpdateOnce(
    s.applied,
    m.terminateChildUpdate,
    async ({ agent_id, force }) => {
      const child = leader.childOf(s, agent_id);
      // Terminating answers the child's review or request: it is no longer pending.
      Object.assign(child, { terminate_posted: true, review_pending: false, review_pending_ts: null, termination_requested: false });
      if (force) s.events.emit('terminate.forced', { reason: 'leader_force', target: agent_id });
      else s.events.emit('completion.approved', { target: agent_id });
      leader.settleChildTask(s, agent_id, force);
      // The child reports `terminating` once it has the signal; the directory hears it from here first, before the answer.
      await Promise.all([tell(agentWorkflowId(s.id.runId, agent_id), m.terminateSignal, { force }), statusToDirectory(s, agent_id, 'terminating')]);
      return { sentinel_posted: true };
    },
    { validator: s.validated(({ agent_id, force }: { agent_id: string; force: boolean }) => leader.checkTerminateChild(s, agent_id, force)) },
  );

  setUpdateOnce(
    s.applied,
    m.updatePlanTaskUpdate,
    (input) => ({ task_id: input.task_id, status: input.status, newly_ready: leader.updatePlanTask(s, input) }),
    { validator: s.validated((input: m.UpdatePlanTaskInput) => void (leader.checkReviewGate(s, 'update_plan_task'), leader.checkUpdatePlanTask(s, input))) },
  );

  setHandler(m.pendingReviewsQuery, (args) => leader.pendingReviews(s, args?.now ?? Date.now()), {
    description: "This leader's children waiting for its review, oldest first: { now?: ms (workflow time) } for their ages.",
  });
}
