import { log, uuid4 } from '@temporalio/workflow';
import { prefixed, type Text } from '../../src/common/pure/content';
import { humanAnsweredSignal, systemMessageSignal } from '../agent/messages';
import { proven, questionClaim, rootDecisionClaim, type DecisionProof } from '../../src/common/pure/decisionProof';
import { refuse } from '../errors';
import { requireProof } from '../proofCheck';
import { EventBuffer } from '../events';
import { agentWorkflowId, questionWorkflowId } from '../ids';
import { questionWithdrawnSignal } from '../question/messages';
import { rootReviewAsk, rootVerdictOf, type SystemAsk } from '../question/system';
import { tell } from '../signals';
import type { Limits, PeerEntry } from '../types';
import type { DipperEvent } from '../../src/common/stores/eventStore';
import { systemQid, type Asking, type QueuedAsk } from './ask';
import { Directory } from './directory';
import { checkReservation, freshQuota, release, reserve, type QuotaData } from './quota';
import type * as m from './messages';

export interface RunInput {
  runId: string;
  /** Long tasks are a reference into the content store (every agent of the run carries the task). */
  task: Text;
  root: { agentId: string; name: string; role: string; skill: string };
  limits: Limits;
  /** The run is cancelled this long after it starts (absent or 0: no deadline); the root is warned `deadlineWarningSeconds` before. */
  deadlineSeconds?: number;
  deadlineWarningSeconds?: number;
  /** Whether a human gateway takes questions (DIPPER_HUMAN_GATEWAY); absent in older runs, which had one. */
  humanGateway?: boolean;
  /** The gateway's public keys: a person's verdict on the root's report is taken only with a signature by one of them. */
  decisionKeys: string[];
  data?: RunData;
}

export interface RunData {
  status: m.RunStatus;
  /** Who cancelled the run and why (cancelled runs only). */
  cancelled?: m.CancelRun;
  /** Spawn quotas' counts (absent until the first spawn asks). */
  quota?: QuotaData;
  /** When the run is cancelled by its deadline (ms since the epoch), and whether the root was warned. */
  deadline_at?: number;
  deadline_warned?: boolean;
  /** The root's workflow has started, so its token can be used. */
  root_ready: boolean;
  created_at: number;
  workspace_path: string;
  /** The host the run is pinned to (workflows/host.ts); absent on one host and for runs from before `run-host`. */
  host?: string;
  /** Questions of the run still open (workflows/question), ended with the run. */
  questions?: string[];
  /** Of those, the ones ask_user made room for whose workflow has not said it started yet, with when (workflow time). */
  question_holds?: Record<string, number>;
  /** iSphere approvals of the run still open (workflows/isphere), ended with the run. */
  approvals?: string[];
  /** System questions to start (root reviews, watchdog escalations), and the keys of the last ones asked, so a signal sent twice asks once. */
  to_ask?: QueuedAsk[];
  asked_keys?: string[];
  entries: Record<string, PeerEntry>;
  pending_root: m.RootReport[];
  events: DipperEvent[];
}

/** Room ask_user made for a question is given back if its workflow has not said it started in this long. */
const QUESTION_HOLD_MS = 10 * 60_000;

/**
 * Everything a run holds, with one method per message: `check*` refuses
 * what a validator refuses and changes nothing, the others apply. The
 * handlers (handlers.ts) are one line each; the workflow's loop only waits.
 */
export class RunState {
  readonly data: RunData;
  readonly dir: Directory;
  readonly events: EventBuffer;
  /** The system question being started, and those withdrawn meanwhile (workflows/run/ask.ts). */
  readonly asking: Asking = { starting: null, withdrawn: new Map() };

  constructor(readonly input: RunInput) {
    this.data = input.data ?? initialData(input);
    this.dir = new Directory(this.data.entries);
    this.events = new EventBuffer(input.runId, null, this.data.events);
  }

  get active(): boolean {
    return this.data.status === 'active';
  }

  private get rootId(): string {
    return this.input.root.agentId;
  }

  private get rootWorkflowId(): string {
    return agentWorkflowId(this.input.runId, this.rootId);
  }

  // Queries.

  peers(args?: { caller_id?: string; scope?: m.PeerScope }): m.PeerRow[] {
    return this.dir.peers(args?.caller_id ?? this.rootId, args?.scope ?? 'all');
  }

  peer(args?: { agent_id?: string }): PeerEntry | null {
    return this.dir.get(args?.agent_id ?? this.rootId);
  }

  agents(): PeerEntry[] {
    return Object.values(this.data.entries);
  }

  /** The open questions, without room held for a start that never came (the gateway died between the two, and no retry followed). */
  private liveQuestions(now: number): string[] {
    const holds = this.data.question_holds ?? {};
    return (this.data.questions ?? []).filter((q) => holds[q] === undefined || now - holds[q] < QUESTION_HOLD_MS);
  }

  checkOpenQuestion({ qid, agent_id }: { qid: string; agent_id: string }): void {
    if (!this.dir.get(agent_id)) throw refuse('unknown_agent', 'This agent is not in its run’s directory.');
    const cap = this.input.limits.maxOpenQuestions;
    // A run from before the limit has none.
    if (cap === undefined) return;
    const open = this.liveQuestions(Date.now());
    if (!open.includes(qid) && open.length >= cap) {
      throw refuse('quota_exceeded', `This run already has ${open.length} open questions, its limit; wait for answers before asking more.`, {
        quota: 'open_questions',
        limit: cap,
      });
    }
  }

  openQuestion({ qid, agent_id }: { qid: string; agent_id: string }): { open: number; fresh: boolean; role: string; ancestors: string[] } {
    const open = (this.data.questions = this.liveQuestions(Date.now()));
    const holds = (this.data.question_holds ??= {});
    for (const q of Object.keys(holds)) if (!open.includes(q)) delete holds[q];
    const fresh = !open.includes(qid);
    if (fresh) {
      open.push(qid);
      holds[qid] = Date.now();
    }
    // The asker's leader, its leader, ... up to the root.
    const me = this.dir.get(agent_id)!;
    const ancestors: string[] = [];
    for (let next = me.leader_id; next && !ancestors.includes(next); next = this.dir.get(next)?.leader_id ?? null) ancestors.push(next);
    return { open: open.length, fresh, role: me.role, ancestors };
  }

  openQuestions(args?: { qid?: string }): { open: number; includes: boolean; limit: number | null } {
    const open = this.data.questions ?? [];
    return { open: open.length, includes: args?.qid !== undefined && open.includes(args.qid), limit: this.input.limits.maxOpenQuestions ?? null };
  }

  view(): m.RunView {
    const { data, input } = this;
    return {
      run_id: input.runId,
      status: data.status,
      root_ready: data.root_ready,
      task: input.task,
      root_agent_id: this.rootId,
      agent_count: this.dir.size,
      created_at: data.created_at,
      pending_root: data.pending_root,
      deadline_at: data.deadline_at ? new Date(data.deadline_at).toISOString() : null,
      host: data.host ?? null,
    };
  }

  // The root's reports and the person's decisions on them.

  /** The root reported (a review or a termination request): a question to the person, replacing one about an older report. */
  rootReported(report: m.RootReport): Promise<void> | undefined {
    const data = this.data;
    const before = data.pending_root.find((r) => r.kind === report.kind);
    const entry = { ...report };
    if (this.active) {
      entry.qid = systemQid();
      (data.to_ask ??= []).push({ ...rootReviewAsk(report.kind, this.rootId, report.detail), key: `root-${report.kind}-${report.ts}`, qid: entry.qid });
    }
    data.pending_root = data.pending_root.filter((r) => r.kind !== report.kind).concat(entry);
    // A newer report replaces the question about the older one.
    if (before?.qid) return this.withdraw(before, 'The root reported again; a newer question replaces this one.').then(() => undefined);
    return undefined;
  }

  /** The person answered the question about a report (in the console): taken only with the gateway's proof of that answer. */
  rootAnswered(answer: m.RootAnswered): Promise<void> | undefined {
    // Decided already (through /root/decision, or a newer report replaced the question): nothing to do.
    if (!this.data.pending_root.some((r) => r.kind === answer.kind && r.qid === answer.qid)) return undefined;
    const claim = questionClaim(this.input.runId, { qid: answer.qid, asked_at: answer.asked_at }, answer.operator, { answers: answer.given ?? [] }, answer.proof?.at ?? 0);
    if (!answer.given?.[0] || !proven(claim, answer.proof, this.input.decisionKeys)) {
      log.warn('refused a decision without a valid proof', { kind: 'root_answer', qid: answer.qid });
      return undefined;
    }
    return this.decide({ kind: answer.kind, operator: answer.operator, ...rootVerdictOf(answer.given[0]) }).then(() => undefined);
  }

  checkDecision(decision: m.RootDecision & { proof?: DecisionProof; report_ts?: number }): void {
    const report = this.data.pending_root.find((r) => r.kind === decision.kind);
    if (!report) throw refuse('nothing_pending', `The root has no pending ${decision.kind} to decide.`, { field: 'kind' });
    // The root reported again after the person looked: an honest click on the older report, not a forgery.
    if (decision.report_ts !== undefined && decision.report_ts !== report.ts) {
      throw refuse('stale', `The root has reported its ${decision.kind} again since; decide on the newer report.`, { field: 'kind' });
    }
    requireProof(rootDecisionClaim(this.input.runId, report, decision, decision.proof?.at ?? 0), decision.proof, this.input.decisionKeys, { report: `${report.kind}@${report.ts}` });
  }

  /** Decided through the operator API: the question about it in the console is over (reports from before `root-questions` have none). */
  decideByOperator(decision: m.RootDecision): Promise<{ ok: true; run_status: string }> {
    const report = this.data.pending_root.find((r) => r.kind === decision.kind);
    if (!report?.qid) return this.decide(decision);
    return this.decide(decision).then(async (out) => {
      await this.withdraw(report, `Decided through the operator API${decision.operator ? ` by ${decision.operator}` : ''}.`);
      return out;
    });
  }

  /**
   * The human's verdict on the root's pending review or termination request.
   * Called with no await of its own around it: the Update's completion must
   * come in the same order among a task's commands as recorded histories have it.
   */
  private async decide({ kind, verdict, text, operator }: m.RootDecision): Promise<{ ok: true; run_status: string }> {
    const data = this.data;
    data.pending_root = data.pending_root.filter((r) => r.kind !== kind);
    // A turned-down termination request is recorded by the root itself (completion.rework), like any leader's answer.
    if (verdict === 'approve' || kind === 'review') {
      this.events.emit(verdict === 'approve' ? 'completion.approved' : 'completion.rework', { kind, by: 'user', ...(operator ? { operator } : {}) }, this.rootId);
    }
    if (verdict === 'rework') {
      await tell(this.rootWorkflowId, systemMessageSignal, { message_id: uuid4(), content: prefixed('rework: ', text ?? '') });
    }
    if (verdict === 'approve' && kind === 'termination') data.status = 'completed';
    else await tell(this.rootWorkflowId, humanAnsweredSignal, { kind });
    return { ok: true as const, run_status: data.status };
  }

  /** A report's question still queued or being started is withdrawn without a signal sent too early. */
  private withdraw(report: m.RootReport | undefined, reason: string): Promise<boolean> {
    if (!report?.qid) return Promise.resolve(true);
    // Not started yet: it leaves the queue and is never asked (a signal would find no workflow, and it would be asked later).
    const queued = (this.data.to_ask ?? []).findIndex((a) => a.qid === report.qid);
    if (queued >= 0) {
      this.data.to_ask!.splice(queued, 1);
      return Promise.resolve(true);
    }
    // Being started: a signal now could reach the server before the workflow exists. It is told once started.
    if (this.asking.starting === report.qid) {
      this.asking.withdrawn.set(report.qid, reason);
      return Promise.resolve(true);
    }
    return tell(questionWorkflowId(this.input.runId, report.qid), questionWithdrawnSignal, { reason });
  }

  // Questions Dipper asks itself, and the run's open questions and approvals.

  systemQuestion(ask: SystemAsk & { key: string }): void {
    const data = this.data;
    if (!this.active) return;
    const asked = (data.asked_keys ??= []);
    if (asked.includes(ask.key) || (data.to_ask ?? []).some((a) => a.key === ask.key)) return;
    // A thousand idle agents must not become a thousand questions past the run's limit: the rest are recorded, not asked.
    const cap = this.input.limits.maxOpenQuestions;
    if (cap !== undefined && (data.questions ?? []).length + (data.to_ask ?? []).length >= cap) {
      this.events.emit('system_question_dropped', { kind: ask.system.kind, about: ask.system.agent_id, open: (data.questions ?? []).length, limit: cap });
      return;
    }
    (data.to_ask ??= []).push({ ...ask, qid: systemQid() });
  }

  questionOpened({ qid }: { qid: string }): void {
    const open = (this.data.questions ??= []);
    if (!open.includes(qid)) open.push(qid);
    if (this.data.question_holds) delete this.data.question_holds[qid];
  }

  questionClosed({ qid }: { qid: string }): void {
    this.data.questions = (this.data.questions ?? []).filter((q) => q !== qid);
    if (this.data.question_holds) delete this.data.question_holds[qid];
  }

  approvalOpened({ approval_id }: { approval_id: string }): void {
    const open = (this.data.approvals ??= []);
    if (!open.includes(approval_id)) open.push(approval_id);
  }

  approvalClosed({ approval_id }: { approval_id: string }): void {
    this.data.approvals = (this.data.approvals ?? []).filter((a) => a !== approval_id);
  }

  // Spawn quotas.

  private quota(): QuotaData {
    return (this.data.quota ??= freshQuota(this.input.limits, this.dir.size, Date.now()));
  }

  /** Judged as reserve() would act: the caller's releases first, on a copy (a validator changes nothing). */
  checkReservation({ count, releases, reservation_id }: m.ReserveRequest): void {
    if (!this.active) throw refuse('run_ended', 'The run has ended; nothing more can be spawned in it.');
    const q = this.data.quota ?? freshQuota(this.input.limits, this.dir.size, Date.now());
    if (q.in_flight[reservation_id] !== undefined) return;
    const after = { ...q, in_flight: { ...q.in_flight } };
    for (const r of releases ?? []) release(after, r.reservation_id, r.spawned);
    checkReservation(after, this.input.limits, count, Date.now());
  }

  /** The same reservation asked for again is the one already held. */
  reserve({ count, releases, reservation_id }: m.ReserveRequest): { reservation_id: string } {
    if (this.quota().in_flight[reservation_id] !== undefined) return { reservation_id };
    for (const r of releases ?? []) release(this.quota(), r.reservation_id, r.spawned);
    reserve(this.quota(), this.input.limits, reservation_id, count, Date.now());
    return { reservation_id };
  }

  releaseSpawns({ reservation_id, spawned }: { reservation_id: string; spawned: number }): void {
    release(this.quota(), reservation_id, spawned);
  }

  // The run's end.

  /** Cancelling an ended run changes nothing, and says how it ended. */
  cancel(cancel: m.CancelRun): { run_status: m.RunStatus } {
    if (this.active) {
      this.data.status = 'cancelled';
      this.data.cancelled = cancel;
    }
    return { run_status: this.data.status };
  }
}

function initialData(input: RunInput): RunData {
  const { root } = input;
  const data: RunData = {
    status: 'active',
    root_ready: false,
    created_at: Date.now(),
    workspace_path: '',
    entries: {},
    pending_root: [],
    events: [],
  };
  if (input.deadlineSeconds) data.deadline_at = data.created_at + input.deadlineSeconds * 1000;
  data.entries[root.agentId] = {
    agent_id: root.agentId,
    name: root.name,
    role: root.role,
    team_id: null,
    leader_id: null,
    status: 'active',
    is_leader_of: [],
    depth: 0,
  };
  return data;
}
