import { reviewGateRefusal } from './reviewGate';
import { sameText } from '../../src/common/pure/content';
import { refuse } from '../errors';
import type { ChildRecord, PlanTask, PlanTaskSpec } from '../types';
import type { CreateTeamInput, UpdatePlanTaskInput } from './messages';
import { readyIds, refreshReadiness, unmetDeps, validatePlan } from './plan';
import type { AgentState } from './state';

/**
 * The rules an agent follows as a leader: its plan, the teams it leads and
 * their members. check* functions only refuse; the rest apply accepted calls.
 */

export function checkDeclarePlan(s: AgentState, tasks: PlanTaskSpec[]): void {
  s.checkAlive();
  if (s.data.plan || s.planBusy) {
    throw refuse('plan_already_declared', 'You already have an active plan; call remove_plan first to replan.', {
      plan_id: s.data.plan?.plan_id ?? null,
    });
  }
  if (tasks.length > s.limits.maxPlanTasks) {
    throw refuse('invalid_input', `A plan holds at most ${s.limits.maxPlanTasks} tasks.`, { field: 'tasks' });
  }
  validatePlan(tasks);
}

export function checkRemovePlan(s: AgentState): void {
  s.checkAlive();
  const plan = s.data.plan;
  if (!plan || s.planBusy) throw refuse('no_active_plan', 'You have no active plan.');
  const inFlight = plan.tasks.filter((t) => t.status === 'in_flight');
  if (inFlight.length > 0) {
    throw refuse('plan_in_use', 'Tasks are in flight; approve or force-terminate their agents before replanning.', {
      in_flight: inFlight.map((t) => ({ task_id: t.id, agent_id: t.agent_id ?? null })),
    });
  }
}

function activeTask(s: AgentState, taskId: string): PlanTask {
  const plan = s.data.plan;
  // A plan being removed (or declared) is not active for anything else.
  if (!plan || s.planBusy) throw refuse('no_active_plan', 'You have no active plan; declare_plan first.');
  const task = plan.tasks.find((t) => t.id === taskId);
  if (!task) throw refuse('unknown_task', `Task "${taskId}" is not in plan ${plan.plan_id}.`, { field: 'task_id' });
  return task;
}

export function checkDepth(s: AgentState): void {
  const next = s.id.depth + 1;
  if (next > s.limits.maxDepth) {
    throw refuse('depth_exceeded', `A team here would sit at depth ${next}; the limit is ${s.limits.maxDepth}.`, {
      depth: next,
      max_depth: s.limits.maxDepth,
    });
  }
}

export function checkSpawn(s: AgentState, taskId: string): PlanTask {
  s.checkAlive();
  if (s.spawnBusy) throw refuse('concurrent_spawn', 'Another spawn_agent of yours is still in flight; retry when it returns.');
  const task = activeTask(s, taskId);
  if (task.status === 'blocked') {
    const unmet = unmetDeps(s.data.plan!.tasks, task);
    throw refuse('task_not_ready', `Task "${taskId}" waits on ${unmet.join(', ')}.`, { field: 'task_id', unmet_deps: unmet });
  }
  if (task.status !== 'ready') {
    // A spawn sent again after its answer was lost learns here which agent it made.
    const by = task.agent_id ? { agent_id: task.agent_id } : {};
    throw refuse('task_not_pending', `Task "${taskId}" is ${task.status}${task.agent_id ? ` (agent ${task.agent_id})` : ''}.`, { field: 'task_id', status: task.status, ...by });
  }
  checkDepth(s);
  return task;
}

/**
 * Room for `count` more direct children. Each child's record is part of the
 * leader's state, carried through continue-as-new; with this cap the
 * records stay a few hundred kilobytes at most. Checked in validators only
 * (replay does not run them), so older histories are not judged by it.
 */
export function checkChildrenRoom(s: AgentState, count: number): void {
  const limit = s.limits.maxChildrenPerLeader;
  if (limit === undefined) return;
  const current = Object.keys(s.data.children).length;
  if (current + count > limit) {
    throw refuse('quota_exceeded', `You lead ${current} agents and may lead ${limit}; ${count} more would pass it.`, {
      quota: 'children_per_leader',
      limit,
      current,
    });
  }
}

export function checkCreateTeam(s: AgentState, input: CreateTeamInput): void {
  s.checkAlive();
  if (s.createTeamBusy) throw refuse('concurrent_create_team', 'Another create_team of yours is still in flight.');
  checkDepth(s);
  const roles = input.roles;
  const first = roles[0];
  const allSame = roles.length > 1 && roles.every((r) => r.skill === first.skill && sameText(r.description, first.description));
  if (allSame && !input.consensus) {
    throw refuse(
      'duplicate_member_descriptions',
      'Every member has the same skill and description, so they would all do the same work. Write distinct descriptions, or pass consensus=true for deliberate parallel attempts.',
      { field: 'roles' },
    );
  }
}

/** Finds a direct child; the caller distinguishes unknown_agent from not_leader with the run directory. */
/** A direct child by id; own properties only, so "__proto__" is no child. */
export function childRecord(s: AgentState, agentId: string): ChildRecord | undefined {
  return Object.hasOwn(s.data.children, agentId) ? s.data.children[agentId] : undefined;
}

export function childOf(s: AgentState, agentId: string): ChildRecord {
  const child = childRecord(s, agentId);
  if (!child) throw refuse('not_member', `Agent "${agentId}" is not a member of a team you lead.`, { field: 'agent_id' });
  return child;
}

export function checkTerminateChild(s: AgentState, agentId: string, force: boolean): void {
  s.checkAlive();
  const child = childOf(s, agentId);
  if (child.terminate_posted) {
    throw refuse('already_terminating', `A terminate sentinel for "${agentId}" is already posted; nothing to do.`, {
      field: 'agent_id',
    });
  }
  if (!force && !child.review_pending && !child.termination_requested && child.status !== 'terminated') {
    throw refuse(
      'child_not_pending_review',
      `"${agentId}" has not signalled a review. Wait for signal_review, send rework with send_message, or pass force=true.`,
      { field: 'agent_id' },
    );
  }
}

/** Marks the child's plan task done (approval) or failed (force); returns the task ids it made ready. */
export function settleChildTask(s: AgentState, agentId: string, force: boolean): string[] {
  const task = s.data.plan?.tasks.find((t) => t.agent_id === agentId && t.status === 'in_flight');
  if (!task) return [];
  return settleTask(s, task, force ? 'failed' : 'done', undefined);
}

function settleTask(s: AgentState, task: PlanTask, status: 'done' | 'failed', note: string | undefined): string[] {
  task.status = status;
  s.events.emit(status === 'done' ? 'task_done' : 'task_failed', {
    plan_id: s.data.plan!.plan_id,
    task_id: task.id,
    agent_id: task.agent_id ?? null,
    ...(note ? { note } : {}),
  });
  const ready = status === 'done' ? refreshReadiness(s.data.plan!.tasks) : [];
  for (const id of ready) s.events.emit('task_ready', { plan_id: s.data.plan!.plan_id, task_id: id });
  return ready;
}

export function checkUpdatePlanTask(s: AgentState, input: UpdatePlanTaskInput): PlanTask {
  s.checkAlive();
  const task = activeTask(s, input.task_id);
  if (task.status === 'done' || task.status === 'failed') {
    throw refuse('invalid_transition', `Task "${task.id}" is already ${task.status}; task status is set once.`, {
      field: 'task_id',
      status: task.status,
    });
  }
  const child = task.agent_id ? childRecord(s, task.agent_id) : undefined;
  // In flight without an agent yet means a spawn is under way.
  if (task.status === 'in_flight' && (!child || child.status !== 'terminated')) {
    throw refuse(
      'invalid_transition',
      `Task "${task.id}" is in flight under live agent "${task.agent_id}"; approve it with terminate_child instead.`,
      { field: 'task_id', status: task.status, agent_id: task.agent_id },
    );
  }
  return task;
}

export function updatePlanTask(s: AgentState, input: UpdatePlanTaskInput): string[] {
  return settleTask(s, checkUpdatePlanTask(s, input), input.status, input.note);
}

export function remainingReady(s: AgentState): string[] {
  return s.data.plan ? readyIds(s.data.plan.tasks) : [];
}

/** list_pending_reviews: direct children with a review pending, oldest first, untimed last. */
export function pendingReviews(s: AgentState, now: number) {
  return Object.values(s.data.children)
    .filter((c) => c.review_pending && !c.terminate_posted && c.agent_id !== s.id.agentId)
    .sort((a, b) => (a.review_pending_ts ?? Infinity) - (b.review_pending_ts ?? Infinity))
    .map((c) => ({
      agent_id: c.agent_id,
      role: c.skill,
      review_pending_ts: c.review_pending_ts === null ? null : c.review_pending_ts / 1000,
      age_s: c.review_pending_ts === null ? null : Math.max(0, (now - c.review_pending_ts) / 1000),
      summary: c.summary,
      name: c.name,
    }));
}

/**
 * The review gate, for the validators of the leader's own calls outside the
 * allowlist: checked where the call is applied, atomically with it and with
 * no round trip of its own. Validators do not run on replay.
 */
export function checkReviewGate(s: AgentState, tool: string): void {
  const pending = pendingReviews(s, Date.now());
  if (pending.length > 0) throw reviewGateRefusal(tool, pending);
}

export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return s || 'agent';
}
