import { callSteps } from '../host';
import { refuse } from '../errors';
import { agentWorkflowId } from '../ids';
import { CALL_RECEIPT_MS, callKey } from '../receipts';
import { tell } from '../signals';
import { condition, currentUpdateInfo, uuid4 } from '@temporalio/workflow';
import { sameText, type Text } from '../../src/common/pure/content';
import type { ChildRecord, PlanTask, PlanTaskSpec, SpawnMade } from '../types';
import * as m from './messages';
import { buildTasks, readyIds, refreshReadiness, unmetDeps, validatePlan } from './plan';
import { reviewGateRefusal } from './reviewGate';
import { describeMember, keepStarted, leadsTeams, newTeam, prepareSpawn, releaseSpawns, startsOf, undoTeam, type Described, type TeamRec } from './spawn';
import { newId, type AgentState } from './state';
import { statusToDirectory } from './reports';

/** spawnOutcome answers for the last few spawns. */
const OUTCOMES_KEPT = 8;

/** A spawn_agent accepted and not yet recorded: its step runs, and its caller waits for the member. */
interface SpawnFlight {
  /** The spawn's Update id: what its step announces (types.ts, SpawnAnnounce). */
  key: string;
  task: PlanTask;
  existing: TeamRec | undefined;
  member: Described;
  answer: m.SpawnResult;
  recorded: boolean;
}

/**
 * An agent as a leader: its plan, the teams it leads and their members. It
 * validates and applies its own changes: check* methods only refuse (they
 * run in Update validators, which replay does not run), the others apply
 * an accepted call. Its records live in the agent's state (s.data), which
 * continue-as-new carries; what is only in flight lives here.
 */
export class Leader {
  /** A spawn_agent, declare_plan or remove_plan, create_team under way: each kind runs one at a time. */
  private spawning = false;
  private planning = false;
  /** The call key of the create_team in flight: the same call repeated waits for its answer. */
  private teamBuilding: string | null = null;
  /** Spawns and teams accepted and not yet started: buildForever starts them, the handler waits for the end. */
  private readonly queue: { start: () => void; drop: () => void }[] = [];
  /** Builds started and not ended. */
  private building = 0;
  /** The spawn_agent in flight, until its member is recorded. */
  private flight: SpawnFlight | null = null;
  /** How the last spawns ended, by member id (spawnOutcome). */
  private readonly outcomes = new Map<string, Promise<m.SpawnResult>>();

  constructor(
    private readonly s: AgentState,
    /** The run's task: every create_team member gets it as its first message. */
    private readonly runTask: Text,
  ) {}

  // What its loop of builds drives

  /**
   * Starts accepted spawns and teams as they come: a loop of its own beside the agent's main loop, so a launch
   * that waits for a runtime's webhook never holds a spawn. It wakes in the workflow task that accepted them, and
   * each runs beside it, answering its own Update.
   */
  async buildForever(): Promise<never> {
    for (;;) {
      await condition(() => this.queue.length > 0);
      // An agent terminated since it accepted them starts no one: its subtree has been, or is being, told it ended.
      const ended = this.s.status === 'terminated';
      for (const work of this.queue.splice(0)) (ended ? work.drop : work.start)();
    }
  }

  /**
   * Spawns and teams queued or under way. The agent neither continues as new
   * nor ends while there are: spawn_agent's Update has answered by then, and
   * only this loop still holds the step whose word records the member (lost
   * with the run, the member would run unrecorded, its reports dropped).
   */
  get busy(): boolean {
    return this.queue.length > 0 || this.building > 0;
  }

  /** Work for the loop of builds; the Update that asked for it answers with its end, or is refused once ended. */
  private queued<T>(work: () => Promise<T>, undo: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.queue.push({
        start: () => {
          this.building++;
          void work()
            .finally(() => this.building--)
            .then(resolve, reject);
        },
        drop: () => {
          undo();
          reject(refuse('agent_terminated', 'You have been terminated (or your run has ended); this call changes nothing.'));
        },
      }),
    );
  }

  // A child's reports

  /**
   * A child's new report or request supersedes the one its leader has not read yet (the spec: call again to
   * supersede), so a child that reports in a loop holds at most one of each in its leader's inbox.
   */
  childChanged(change: m.ChildChange): void {
    const child = this.childRecord(change.agent_id);
    if (!child) return;
    // A numbered change older than one already applied arrived late: its mirror is stale (the inbox item still counts).
    if (change.seq !== undefined && change.seq > (child.seq ?? 0)) Object.assign(child, change.patch, { seq: change.seq });
    const item = change.inbox;
    if (item && !this.s.inbox.has(item.message_id)) {
      if (item.kind !== 'system') this.s.inbox.drop(change.agent_id, item.kind);
      this.s.inbox.push(item.kind, change.agent_id, item.content, item.message_id, Date.now());
    }
  }

  // declare_plan, remove_plan, update_plan_task

  checkDeclarePlan(tasks: PlanTaskSpec[]): void {
    this.checkReviewGate('declare_plan');
    this.s.checkAlive();
    if (this.s.data.plan || this.planning) {
      throw refuse('plan_already_declared', 'You already have an active plan; call remove_plan first to replan.', {
        plan_id: this.s.data.plan?.plan_id ?? null,
      });
    }
    if (tasks.length > this.s.limits.maxPlanTasks) {
      throw refuse('invalid_input', `A plan holds at most ${this.s.limits.maxPlanTasks} tasks.`, { field: 'tasks' });
    }
    validatePlan(tasks);
    this.s.checkEventsWritable();
  }

  async declarePlan(tasks: PlanTaskSpec[]): Promise<m.DeclarePlanResult> {
    const s = this.s;
    this.planning = true;
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
      this.planning = false;
    }
  }

  checkRemovePlan(): void {
    this.checkReviewGate('remove_plan');
    this.s.checkAlive();
    const plan = this.s.data.plan;
    if (!plan || this.planning) throw refuse('no_active_plan', 'You have no active plan.');
    const inFlight = plan.tasks.filter((t) => t.status === 'in_flight');
    if (inFlight.length > 0) {
      throw refuse('plan_in_use', 'Tasks are in flight; approve or force-terminate their agents before replanning.', {
        in_flight: inFlight.map((t) => ({ task_id: t.id, agent_id: t.agent_id ?? null })),
      });
    }
    this.s.checkEventsWritable();
  }

  async removePlan(): Promise<{ removed_plan_id: string }> {
    const s = this.s;
    const plan = s.data.plan!;
    this.planning = true;
    try {
      const removedPath = await callSteps(s.id.host).retirePlanFile({ planPath: plan.plan_path });
      s.data.plan = null;
      s.events.emit('plan_removed', { plan_id: plan.plan_id, plan_path: removedPath });
      return { removed_plan_id: plan.plan_id };
    } finally {
      this.planning = false;
    }
  }

  /** list_ready: plan tasks ready to spawn (null without a plan). */
  ready(): { ready: string[] } | null {
    return this.s.data.plan ? { ready: readyIds(this.s.data.plan.tasks) } : null;
  }

  checkUpdatePlanTask(input: m.UpdatePlanTaskInput): PlanTask {
    this.checkReviewGate('update_plan_task');
    this.s.checkAlive();
    const task = this.activeTask(input.task_id);
    if (task.status === 'done' || task.status === 'failed') {
      throw refuse('invalid_transition', `Task "${task.id}" is already ${task.status}; task status is set once.`, {
        field: 'task_id',
        status: task.status,
      });
    }
    const child = task.agent_id ? this.childRecord(task.agent_id) : undefined;
    // In flight without an agent yet means a spawn is under way.
    if (task.status === 'in_flight' && (!child || child.status !== 'terminated')) {
      throw refuse(
        'invalid_transition',
        `Task "${task.id}" is in flight under live agent "${task.agent_id}"; approve it with terminate_child instead.`,
        { field: 'task_id', status: task.status, agent_id: task.agent_id },
      );
    }
    this.s.checkEventsWritable();
    return task;
  }

  updatePlanTask(input: m.UpdatePlanTaskInput): { task_id: string; status: 'done' | 'failed'; newly_ready: string[] } {
    const task = this.activeTask(input.task_id);
    return { task_id: input.task_id, status: input.status, newly_ready: this.settleTask(task, input.status, input.note) };
  }

  // spawn_agent

  checkSpawn(taskId: string): PlanTask {
    this.s.checkAlive();
    if (this.spawning) throw refuse('concurrent_spawn', 'Another spawn_agent of yours is still in flight; retry when it returns.');
    const task = this.activeTask(taskId);
    if (task.status === 'blocked') {
      const unmet = unmetDeps(this.s.data.plan!.tasks, task);
      throw refuse('task_not_ready', `Task "${taskId}" waits on ${unmet.join(', ')}.`, { field: 'task_id', unmet_deps: unmet });
    }
    if (task.status !== 'ready') {
      // A spawn sent again after its answer was lost learns here which agent it made.
      const by = task.agent_id ? { agent_id: task.agent_id } : {};
      throw refuse('task_not_pending', `Task "${taskId}" is ${task.status}${task.agent_id ? ` (agent ${task.agent_id})` : ''}.`, { field: 'task_id', status: task.status, ...by });
    }
    this.checkDepth();
    return task;
  }

  /** The validator's whole check: the review gate, the task, room for one more child, the event log. */
  checkSpawnCall(taskId: string): void {
    this.checkReviewGate('spawn_agent');
    this.checkSpawn(taskId);
    this.checkChildrenRoom(1);
    this.s.checkEventsWritable();
  }

  /**
   * Accepted: the task is in flight from now on (a remove_plan beside it
   * sees that), and the loop of builds starts it. Answered at once, with
   * `confirm`: the member's ids are chosen here, and the caller's gateway
   * gives the answer once the step says the member runs (after telling this
   * leader, so the spawn lock is free and the member recorded before any
   * later call of the caller arrives), or asks spawnOutcome how it ended.
   */
  spawn(taskId: string): m.SpawnResult & { confirm: true } {
    // Sent again after a lost answer, a spawn meets the spec's own rule: the task is no longer ready (task_not_pending).
    const task = this.checkSpawn(taskId);
    const s = this.s;
    this.spawning = true;
    task.status = 'in_flight';
    const existing = s.data.teams.find((t) => t.team_id === s.data.spawn_team_id);
    const teamId = existing?.team_id ?? newId('tm');
    const spec = { role: task.role, skill: task.skill, model: task.model, description: task.description, rules: [] };
    const member = describeMember(s, teamId, { ...spec, planTaskId: task.id, task: task.task }, newId('ag'));
    const answer = { agent_id: member.agentId, team_id: teamId, task_id: task.id, remaining_ready: this.ready()?.ready ?? [], team_created: !existing };
    const flight: SpawnFlight = { key: currentUpdateInfo()?.id ?? newId('spawn'), task, existing, member, answer, recorded: false };
    this.flight = flight;
    const outcome = this.queued(
      () => this.startTask(flight),
      () => {
        task.status = 'ready';
        this.spawning = false;
        this.flight = null;
      },
    );
    this.outcomes.set(member.agentId, outcome);
    // Kept for a spawnOutcome asked moments later; the last few are plenty (one spawn of a leader runs at a time).
    for (const old of [...this.outcomes.keys()].slice(0, -OUTCOMES_KEPT)) this.outcomes.delete(old);
    outcome.catch(() => undefined);
    return { ...answer, confirm: true };
  }

  /** The step's word that the member of the spawn `key` runs: recorded now, before its caller hears. */
  spawnStarted(key: string, made: SpawnMade): void {
    // It only says so when every member started (activities/spawn.ts): recording it cannot be refused.
    if (this.flight?.key === key) this.record(this.flight, made);
  }

  /** spawnOutcome: how the spawn that started `agentId` ended, once it has (its answer, or its refusal thrown). */
  async spawnOutcome(agentId: string): Promise<m.SpawnResult> {
    const outcome = this.outcomes.get(agentId);
    if (outcome) return outcome;
    // Asked after continue-as-new, which forgets outcomes: the record says whether the member was made.
    const child = this.childRecord(agentId);
    if (!child) throw refuse('unavailable', 'That spawn did not start its agent; call spawn_agent again.', { retry_after_ms: 1000 });
    return { agent_id: agentId, team_id: child.team_id, task_id: child.plan_task_id ?? '', remaining_ready: this.ready()?.ready ?? [], team_created: false };
  }

  private async startTask(f: SpawnFlight): Promise<m.SpawnResult> {
    const s = this.s;
    const { existing, task, answer } = f;
    const reservation = uuid4();
    let made: SpawnMade | undefined;
    try {
      // One step reserves, makes the folders, registers and starts the member, and says so before it returns.
      made = await prepareSpawn(
        s,
        {
          skills: [task.skill],
          field: 'task_id',
          team: existing ? { existing } : { newTeamId: answer.team_id },
          taskId: task.id,
          start: startsOf(s, [f.member], this.runTask, existing ? [] : [leadsTeams(s, answer.team_id)], existing?.members.length ?? 0),
          announce: { leaderId: s.id.agentId, key: f.key },
          recorded: () => f.recorded,
        },
        reservation,
      );
      this.record(f, made);
      return answer;
    } catch (err) {
      // Failed after the step said the member runs (its retries spent on what came after): the member stays.
      if (f.recorded) return answer;
      throw err;
    } finally {
      if (!f.recorded) {
        task.status = 'ready';
        this.spawning = false;
        this.flight = null;
      }
      // prepareSpawn gave back what it held if it failed; a step that returned gives back here.
      if (made) await releaseSpawns(s, reservation, f.recorded ? 1 : 0);
    }
  }

  /**
   * The member runs: recorded once, from the step's word or its return,
   * whichever comes first, and the lock is free. Synchronous: the step's
   * word and the caller's next spawn can come in one activation, the word
   * first, and the spawn's validator runs before any awaited continuation.
   */
  private record(f: SpawnFlight, made: SpawnMade): void {
    if (f.recorded) return;
    const s = this.s;
    const team = f.existing ?? newTeam(s, f.answer.team_id, made.workspacePath, `${s.id.name}-team`, []);
    s.data.spawn_team_id = team.team_id;
    const refused = keepStarted(s, team, [f.member], made.started!);
    if (refused.length > 0) throw refuse('unavailable', 'The agent could not be started. Retry shortly.', { retry_after_ms: 1000 });
    f.recorded = true;
    f.task.agent_id = f.member.agentId;
    s.events.emit('task_spawned', { plan_id: s.data.plan!.plan_id, task_id: f.task.id, agent_id: f.member.agentId });
    this.spawning = false;
    if (this.flight === f) this.flight = null;
  }

  // create_team

  /** The key a create_team call is known by: the gateway's, worked out from the words sent, or its input's own. */
  private static teamKey(input: m.CreateTeamInput): string {
    return input.call_key ?? callKey('create_team', input);
  }

  checkCreateTeam(input: m.CreateTeamInput): void {
    const key = Leader.teamKey(input);
    // Its repeat, answered or still under way, gets the first call's answer: nothing to refuse.
    if (this.s.receipts.find(key, Date.now()) !== undefined || this.teamBuilding === key) return;
    this.checkReviewGate('create_team');
    this.s.checkAlive();
    if (this.teamBuilding !== null) throw refuse('concurrent_create_team', 'Another create_team of yours is still in flight.');
    this.checkDepth();
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
    this.checkChildrenRoom(roles.length);
    this.s.checkEventsWritable();
  }

  async createTeam(input: m.CreateTeamInput): Promise<m.CreateTeamResult> {
    const s = this.s;
    // The same call sent again (its answer was lost) gets the same team, not a second one.
    const key = Leader.teamKey(input);
    // The same call while the first is still starting members (its answer ran late, and the caller repeated it as
    // told): it gets the first call's answer when there is one.
    if (this.teamBuilding === key) {
      await condition(() => this.teamBuilding !== key);
      const first = s.receipts.find(key, Date.now());
      if (first !== undefined) return first.answer as m.CreateTeamResult;
      throw refuse('unavailable', 'The same create_team, sent before, created nothing. Retry shortly.', { retry_after_ms: 1000 });
    }
    const kept = s.receipts.find(key, Date.now());
    if (kept !== undefined) return kept.answer as m.CreateTeamResult;
    this.teamBuilding = key;
    return this.queued(
      () => this.buildTeam(input, key),
      () => void (this.teamBuilding = null),
    );
  }

  private async buildTeam(input: m.CreateTeamInput, key: string): Promise<m.CreateTeamResult> {
    const s = this.s;
    let reservation: string | null = null;
    let spawned = 0;
    try {
      const teamId = newId('tm');
      const ids = input.roles.map(() => newId('ag'));
      const members = input.roles.map((r, i) => describeMember(s, teamId, { ...r, rules: input.rules ?? [], task: this.runTask }, ids[i]));
      // All or nothing: if any member cannot start, the ones that did are ended and the team is taken back, so a
      // retry never finds half a team. One step reserves, makes the folder, registers and starts every member; the
      // leader records them after.
      const prepared = await prepareSpawn(s, {
        skills: input.roles.map((r) => r.skill),
        field: 'roles',
        team: { newTeamId: teamId },
        start: startsOf(s, members, this.runTask, [leadsTeams(s, teamId)], 0),
      });
      reservation = prepared.reservation;
      const team = newTeam(s, teamId, prepared.workspacePath, input.name, input.rules ?? [], input.task);
      const refused = keepStarted(s, team, members, prepared.started!);
      if (refused.length > 0) {
        // A member's own refusal (unknown_skill) came from the step, before anything was made; this is the server's.
        await undoTeam(s, team, ids.filter((id) => !refused.includes(id)), `the server refused ${refused.length} of ${ids.length} members`);
        throw refuse('unavailable', 'Not every member could be started, so the team was taken back and nothing was created. Retry shortly.', {
          retry_after_ms: 1000,
        });
      }
      spawned = ids.length;
      const answer = { team_id: team.team_id, members: ids.map((agent_id, i) => ({ agent_id, role: input.roles[i].role })) };
      s.receipts.keep(key, answer, Date.now(), CALL_RECEIPT_MS);
      return answer;
    } finally {
      this.teamBuilding = null;
      await releaseSpawns(s, reservation, spawned);
    }
  }

  // terminate_child

  checkTerminateChild(agentId: string, force: boolean): void {
    this.s.checkAlive();
    const child = this.childOf(agentId);
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
    this.s.checkEventsWritable();
  }

  async terminateChild(agentId: string, force: boolean): Promise<{ sentinel_posted: true }> {
    const s = this.s;
    const child = this.childOf(agentId);
    // Terminating answers the child's review or request: it is no longer pending.
    Object.assign(child, { terminate_posted: true, review_pending: false, review_pending_ts: null, termination_requested: false });
    if (force) s.events.emit('terminate.forced', { reason: 'leader_force', target: agentId });
    else s.events.emit('completion.approved', { target: agentId });
    const task = s.data.plan?.tasks.find((t) => t.agent_id === agentId && t.status === 'in_flight');
    if (task) this.settleTask(task, force ? 'failed' : 'done', undefined);
    // The child reports `terminating` once it has the signal; the directory hears it from here first, before the answer.
    await Promise.all([tell(agentWorkflowId(s.id.runId, agentId), m.terminateSignal, { force }), statusToDirectory(s, agentId, 'terminating')]);
    return { sentinel_posted: true };
  }

  // list_pending_reviews and the review gate

  /** Direct children with a review pending, oldest first, untimed last. */
  pendingReviews(now: number): m.PendingReview[] {
    return Object.values(this.s.data.children)
      .filter((c) => c.review_pending && !c.terminate_posted && c.agent_id !== this.s.id.agentId)
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
   * no round trip of its own.
   */
  private checkReviewGate(tool: string): void {
    const pending = this.pendingReviews(Date.now());
    if (pending.length > 0) throw reviewGateRefusal(tool, pending);
  }

  // Its children and its plan, underneath

  /** A direct child by id; own properties only, so "__proto__" is no child. */
  childRecord(agentId: string): ChildRecord | undefined {
    return Object.hasOwn(this.s.data.children, agentId) ? this.s.data.children[agentId] : undefined;
  }

  private childOf(agentId: string): ChildRecord {
    const child = this.childRecord(agentId);
    if (!child) throw refuse('not_member', `Agent "${agentId}" is not a member of a team you lead.`, { field: 'agent_id' });
    return child;
  }

  private activeTask(taskId: string): PlanTask {
    const plan = this.s.data.plan;
    // A plan being removed (or declared) is not active for anything else.
    if (!plan || this.planning) throw refuse('no_active_plan', 'You have no active plan; declare_plan first.');
    const task = plan.tasks.find((t) => t.id === taskId);
    if (!task) throw refuse('unknown_task', `Task "${taskId}" is not in plan ${plan.plan_id}.`, { field: 'task_id' });
    return task;
  }

  private checkDepth(): void {
    const next = this.s.id.depth + 1;
    if (next > this.s.limits.maxDepth) {
      throw refuse('depth_exceeded', `A team here would sit at depth ${next}; the limit is ${this.s.limits.maxDepth}.`, {
        depth: next,
        max_depth: this.s.limits.maxDepth,
      });
    }
  }

  /**
   * Room for `count` more direct children. Each child's record is part of the
   * leader's state, carried through continue-as-new; with this cap the
   * records stay a few hundred kilobytes at most.
   */
  private checkChildrenRoom(count: number): void {
    const limit = this.s.limits.maxChildrenPerLeader;
    if (limit === undefined) return;
    const current = Object.keys(this.s.data.children).length;
    if (current + count > limit) {
      throw refuse('quota_exceeded', `You lead ${current} agents and may lead ${limit}; ${count} more would pass it.`, {
        quota: 'children_per_leader',
        limit,
        current,
      });
    }
  }

  /** Marks a task done or failed; returns the task ids it made ready. */
  private settleTask(task: PlanTask, status: 'done' | 'failed', note: string | undefined): string[] {
    const s = this.s;
    const planId = s.data.plan!.plan_id;
    task.status = status;
    s.events.emit(status === 'done' ? 'task_done' : 'task_failed', { plan_id: planId, task_id: task.id, agent_id: task.agent_id ?? null, ...(note ? { note } : {}) });
    const ready = status === 'done' ? refreshReadiness(s.data.plan!.tasks) : [];
    for (const id of ready) s.events.emit('task_ready', { plan_id: planId, task_id: id });
    return ready;
  }
}
