import { callSteps } from '../host';
import { refuse } from '../errors';
import { UPDATE_RECEIPT_MS } from '../receipts';
import { currentUpdateInfo } from '@temporalio/workflow';
import type { Plan, PlanTask, PlanTaskSpec, StepAnnounce } from '../types';
import type * as m from './messages';
import { buildTasks, readyIds, validatePlan } from './plan';
import { newId, type AgentState } from './state';

/** Failed plan calls whose refusal planOutcome still gives (the ones that succeeded leave receipts). */
const FAILURES_KEPT = 8;

/** A declare_plan or remove_plan accepted, its file step under way. */
interface PlanFlight {
  /** The call's Update id: what its step announces (types.ts, StepAnnounce). */
  key: string;
  /** Applies the step's word (the file's path): synchronous, and once. */
  apply: (path: string) => m.PlanAnswer;
  answer: m.PlanAnswer | undefined;
  ended: Promise<m.PlanAnswer>;
}

/**
 * declare_plan and remove_plan. Each writes (or retires) the plan file in
 * a step first, and only then changes the plan (the spec's atomicity: no
 * file, no plan). The Update answers as it accepts, with `confirm`; the
 * step tells the agent what it did (a signal, applied at once) and then
 * the caller's gateway, which gives the answer, so a caller's next call
 * finds the plan changed. One plan call runs at a time: while one is in
 * flight the plan is active for nothing else (its spawns, its removal).
 */
export class PlanSteps {
  private flight: PlanFlight | null = null;
  /** Steps not yet returned: the agent neither continues as new nor ends before they have. */
  private steps = 0;
  private readonly failures = new Map<string, Promise<never>>();

  constructor(private readonly s: AgentState) {}

  /** A plan call accepted and its change not yet applied. */
  get inFlight(): boolean {
    return this.flight !== null;
  }

  get busy(): boolean {
    return this.steps > 0;
  }

  checkDeclare(tasks: PlanTaskSpec[]): void {
    const s = this.s;
    if (s.data.plan || this.flight) {
      throw refuse('plan_already_declared', 'You already have an active plan; call remove_plan first to replan.', {
        plan_id: s.data.plan?.plan_id ?? null,
      });
    }
    if (tasks.length > s.limits.maxPlanTasks) {
      throw refuse('invalid_input', `A plan holds at most ${s.limits.maxPlanTasks} tasks.`, { field: 'tasks' });
    }
    validatePlan(tasks);
    s.checkEventsWritable();
  }

  declare(tasks: PlanTaskSpec[]): m.DeclarePlanAccepted {
    const s = this.s;
    const planId = newId('pl');
    const built = buildTasks(tasks);
    const summary = built.map((t) => ({ id: t.id, role: t.role, skill: t.skill, depends_on: t.depends_on, status: t.status }));
    this.start((announce) => callSteps(s.id.host).writePlanFile({ runId: s.id.runId, agentId: s.id.agentId, planId, tasks: built, announce }), (planPath) => {
      s.data.plan = { plan_id: planId, plan_path: planPath, tasks: built };
      s.events.emit('plan_declared', { plan_id: planId, plan_path: planPath, tasks: built.length, ready: readyIds(built) });
      return { plan_id: planId, plan_path: planPath, tasks: summary };
    });
    return { plan_id: planId, tasks: summary, confirm: true };
  }

  checkRemove(): Plan {
    const plan = this.s.data.plan;
    if (!plan || this.flight) throw refuse('no_active_plan', 'You have no active plan.');
    const inFlight = plan.tasks.filter((t: PlanTask) => t.status === 'in_flight');
    if (inFlight.length > 0) {
      throw refuse('plan_in_use', 'Tasks are in flight; approve or force-terminate their agents before replanning.', {
        in_flight: inFlight.map((t) => ({ task_id: t.id, agent_id: t.agent_id ?? null })),
      });
    }
    this.s.checkEventsWritable();
    return plan;
  }

  remove(): m.RemovePlanAccepted {
    const s = this.s;
    const plan = this.checkRemove();
    this.start((announce) => callSteps(s.id.host).retirePlanFile({ planPath: plan.plan_path, runId: s.id.runId, announce }), (removedPath) => {
      s.data.plan = null;
      s.events.emit('plan_removed', { plan_id: plan.plan_id, plan_path: removedPath });
      return { removed_plan_id: plan.plan_id };
    });
    return { removed_plan_id: plan.plan_id, confirm: true };
  }

  /** The step's word that the file of the call `key` is written (or retired): applied now, before its caller hears. */
  stepSaid(key: string, path: string): void {
    if (this.flight?.key === key) this.apply(this.flight, path);
  }

  /** planOutcome: how the plan call `key` ended, once it has (its answer, or its refusal thrown). */
  async outcome(key: string): Promise<m.PlanAnswer> {
    if (this.flight?.key === key) return this.flight.ended;
    const failed = this.failures.get(key);
    if (failed) return failed;
    // Applied in this run or one before it (continue-as-new keeps receipts, not flights).
    const kept = this.s.receipts.find(planKey(key), Date.now());
    if (kept) return kept.answer as m.PlanAnswer;
    throw refuse('unavailable', 'That plan call changed nothing; call it again.', { retry_after_ms: 1000 });
  }

  /** Starts the step of the Update being handled; its return applies the change if its word has not. */
  private start(step: (announce: StepAnnounce) => Promise<string>, apply: (path: string) => m.PlanAnswer): void {
    const key = currentUpdateInfo()?.id ?? newId('plan');
    let settle!: { resolve: (a: m.PlanAnswer) => void; reject: (e: unknown) => void };
    const ended = new Promise<m.PlanAnswer>((resolve, reject) => (settle = { resolve, reject }));
    const flight: PlanFlight = { key, apply, answer: undefined, ended };
    this.flight = flight;
    this.steps++;
    void step({ leaderId: this.s.id.agentId, key })
      .then(
        (path) => settle.resolve(this.apply(flight, path)),
        (err: unknown) => {
          // Failed after its word was applied (its retries spent on what came after): the change stands.
          if (flight.answer) return settle.resolve(flight.answer);
          if (this.flight === flight) this.flight = null;
          this.failures.set(key, ended as Promise<never>);
          for (const old of [...this.failures.keys()].slice(0, -FAILURES_KEPT)) this.failures.delete(old);
          settle.reject(err);
        },
      )
      .finally(() => this.steps--);
    ended.catch(() => undefined);
  }

  /**
   * The change applied once, from the step's word or its return, whichever
   * comes first. Synchronous: the word and the caller's next call can come
   * in one activation, the word first, and the call's validator runs before
   * any awaited continuation.
   */
  private apply(flight: PlanFlight, path: string): m.PlanAnswer {
    if (flight.answer) return flight.answer;
    flight.answer = flight.apply(path);
    this.s.receipts.keep(planKey(flight.key), flight.answer, Date.now(), UPDATE_RECEIPT_MS);
    if (this.flight === flight) this.flight = null;
    return flight.answer;
  }
}

const planKey = (key: string) => `plan:${key}`;
