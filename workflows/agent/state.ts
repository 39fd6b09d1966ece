import { Receipts, type ReceiptData } from '../receipts';
import { type ApplicationFailure, uuid4, workflowInfo } from '@temporalio/workflow';
import { refuse } from '../errors';
import { EventBuffer } from '../events';
import type { AgentStatus, ChildRecord, InboxNews, Limits, Plan, TeamRecord } from '../types';
import type { AgentIdentity, LaunchSpec } from '../../src/common/launchPayload';
import type { DipperEvent } from '../../src/common/stores/eventStore';
import { prefixed, stateBytes, textBytes, type Text } from '../../src/common/pure/content';
import { runWorkflowId } from '../ids';
import { rootReportSignal } from '../run/messages';
import { tell } from '../signals';
import { healthOf } from './health';
import { statusToDirectory, tellLeader } from './reports';
import { emptyInbox, Inbox, type InboxData } from './inbox';
import { reviewDetailProblem } from './reviewDetail';
import { MAX_DELIVERY_BATCH, type DeliverInput, type DeliveryOutcome, type InboxView, type LaunchView, type RequestTerminationResult, type SignalReviewResult } from './messages';
import { isFinished } from './plan';
import type { WatchData } from './watchdog';

/** Everything an agent's workflow carries through continue-as-new. */
export interface AgentData {
  inbox: InboxData;
  review: { pending: boolean; ts: number | null; detail: Text | null };
  termination_requested: boolean;
  last_status_detail: Text;
  terminate: { posted: boolean; posted_at: number | null; consumed: boolean };
  plan: Plan | null;
  /** The team spawn_agent adds members to, created by the first spawn. */
  spawn_team_id: string | null;
  teams: (TeamRecord & { workspace_path: string })[];
  children: Record<string, ChildRecord>;
  crashes: number;
  /** Teams whose workspace went over budget; the leader is told once per team. Absent in older runs. */
  over_budget?: string[];
  /** Reservations given back whose release signal the run may not have had yet; sent again with the next reservation. Absent in older runs. */
  released?: { reservation_id: string; spawned: number }[];
  /** How many changes this agent has told its leader (numbering them); absent in older runs. */
  told_leader?: number;
  /** Answers of recent calls that changed this agent, for their retries (workflows/receipts.ts). */
  receipts: ReceiptData;
  /** Crashed too often; no longer restarted. */
  crashed_out: boolean;
  /** Stopped by Dipper with its process (a spent budget); `down` once the process is stopped. Absent in older runs. */
  halted?: { reason: 'budget'; down: boolean };
  /**
   * false while nothing drives it: a `none` runtime (an outside client acts as it) that has made no tool call and
   * acknowledged nothing yet. The watchdog leaves such an agent alone. Absent: driven (and in older runs).
   */
  driven?: boolean;
  /** The DipperAttention search attribute as last set (absent: never set, `none`). */
  attention?: 'stopped' | 'stalled';
  /** When it crashed out or was halted (workflow time); absent otherwise, and in older runs. */
  stopped_at?: number;
  /** agent_completed has been recorded; each lifecycle records it once. Absent in older runs. */
  completed?: boolean;
  /** Pid of the last runtime exit reported, so one exit reported twice counts once. */
  last_exit_pid?: number;
  /** What the runtime was started with; kept so a crashed agent can be started again. */
  launch_spec: LaunchSpec;
  /** Set when the main loop should (re)launch the runtime. */
  launch_wanted: 'first' | 'resume' | 'fresh' | null;
  /**
   * The generation of the last launch (1 for the first) and when it was made
   * (workflow time, ms): the agent's valid token is the one minted for them.
   * Absent until a launch under this code; tokens from before count as 0.
   */
  launch_gen?: number;
  launched_at?: number;
  run_ended: boolean;
  /** Its leader was terminated, so it is too (absent in older runs). */
  leader_ended?: boolean;
  /** Its children have been told it ended (absent in older runs). */
  subtree_told?: boolean;
  events: DipperEvent[];
  /** Inbox wakes the previous run had not written yet (patch `wakes-carried`). */
  wakes?: string[];
  /** The watchdog's clocks and strikes (workflows/agent/watchdog.ts); absent until it first looks. */
  watch?: WatchData;
}

export function freshData(launch: LaunchSpec): AgentData {
  return {
    inbox: emptyInbox(),
    review: { pending: false, ts: null, detail: null },
    termination_requested: false,
    last_status_detail: '',
    terminate: { posted: false, posted_at: null, consumed: false },
    plan: null,
    spawn_team_id: null,
    teams: [],
    children: {},
    crashes: 0,
    crashed_out: false,
    launch_spec: launch,
    launch_wanted: 'first',
    run_ended: false,
    events: [],
    receipts: { entries: [] },
  };
}

export function newId(prefix: string): string {
  return `${prefix}_${uuid4().replace(/-/g, '').slice(0, 12)}`;
}

/**
 * The agent's state and the rules over it. Methods named check* refuse bad
 * calls without changing anything (they run in Update validators); the
 * others apply a call that has been accepted.
 */
export class AgentState {
  readonly inbox: Inbox;
  readonly events: EventBuffer;
  /** Answers of the calls applied here and in earlier runs: a repeat across continue-as-new gets the first answer. */
  readonly receipts: Receipts;
  /** Set while the watchdog writes to this inbox: its own reminders are no sign of the agent's life. */
  quietPush = false;
  /** Called on every sign of the agent's life (watchdog.ts touch); set by the workflow. */
  onActivity: () => void = () => undefined;

  constructor(
    readonly id: AgentIdentity,
    readonly limits: Limits,
    readonly data: AgentData,
  ) {
    // A state carried from before the receipts were one list has none.
    this.receipts = new Receipts((data.receipts ??= { entries: [] }));
    this.inbox = new Inbox(data.inbox);
    this.events = new EventBuffer(id.runId, id.agentId, data.events, data.wakes);
    delete data.wakes;
    this.inbox.onPush = () => {
      this.events.wakeInbox();
      if (!this.quietPush) this.onActivity();
    };
  }

  get status(): AgentStatus {
    const d = this.data;
    if (d.terminate.consumed || d.run_ended || d.leader_ended) return 'terminated';
    if (d.terminate.posted) return 'terminating';
    if (d.review.pending) return 'review_pending';
    if (d.termination_requested) return 'termination_requested';
    return 'active';
  }

  get isRoot(): boolean {
    return this.id.leaderId === null;
  }

  /** Refuses a call that would add events while the event log cannot take them (EventBuffer.backedUp). For validators only. */
  checkEventsWritable(): void {
    if (this.events.backedUp()) {
      throw refuse('unavailable', 'Dipper cannot record events right now (its event log is unreachable), so this call changed nothing. Retry shortly.', {
        retry_after_ms: 2000,
      });
    }
  }

  /** A terminated agent (or one whose run ended) keeps its record but may change nothing more. */
  checkAlive(): void {
    if (this.status === 'terminated') {
      throw refuse('agent_terminated', 'You have been terminated (or your run has ended); this call changes nothing.');
    }
  }

  // send_message, recipient side

  checkDeliveries(messages: DeliverInput[]): void {
    if (messages.length === 0 || messages.length > MAX_DELIVERY_BATCH) {
      throw refuse('invalid_input', `A delivery carries 1 to ${MAX_DELIVERY_BATCH} messages.`, { field: 'messages' });
    }
    this.checkEventsWritable();
  }

  /** A batch of messages, each delivered or refused on its own (the spec's refusal, as send_message answers it). */
  async deliverAll(messages: DeliverInput[]): Promise<DeliveryOutcome[]> {
    let cleared = false;
    const outcomes = messages.map((msg): DeliveryOutcome => {
      try {
        this.checkDeliver(msg);
      } catch (err) {
        const failure = err as ApplicationFailure;
        const extra = (failure.details?.[0] ?? {}) as Record<string, unknown>;
        return { message_id: msg.message_id, delivered: false, code: failure.type ?? 'internal', message: failure.message, extra };
      }
      if (this.inbox.has(msg.message_id)) return { message_id: msg.message_id, delivered: true, reused: true };
      cleared = this.deliver(msg) || cleared;
      const news = this.newsOf(msg.message_id);
      return { message_id: msg.message_id, delivered: true, ...(news ? { news } : {}) };
    });
    if (cleared && !this.isRoot) {
      // Awaited so the leader's own list_pending_reviews sees the cleared review once send_message returns.
      await tellLeader(this, { patch: { review_pending: false, review_pending_ts: null, termination_requested: false } });
    }
    return outcomes;
  }

  private checkDeliver(input: DeliverInput): void {
    if (input.from_run_id !== this.id.runId) {
      throw refuse('task_mismatch', `Agent "${this.id.agentId}" belongs to a different task.`, { field: 'to' });
    }
    if (this.inbox.has(input.message_id)) {
      const first = this.inbox.fingerprintOf(input.message_id);
      if (input.fingerprint !== undefined && first !== undefined && first !== input.fingerprint) {
        throw refuse('idempotency_conflict', 'This idempotency_key was already used for a message with other content; use a new key for a new message.', {
          field: 'idempotency_key',
        });
      }
      return;
    }
    if (this.status === 'terminated') {
      throw refuse(
        'recipient_terminated',
        `Agent "${this.id.agentId}" has been terminated; its inbox is unreachable. Escalate to your own leader rather than spawning a replacement.`,
        { field: 'to' },
      );
    }
    if (this.inbox.pending >= this.limits.inboxCap) {
      throw refuse('inbox_full', `The inbox of "${this.id.agentId}" holds ${this.limits.inboxCap} pending messages.`, {
        field: 'to',
        cap: this.limits.inboxCap,
      });
    }
    // Pending content lives in the workflow's state, which Temporal keeps under 2 MiB per payload.
    const budget = this.limits.inboxBytes ?? 1024 * 1024;
    if (this.inbox.pendingBytes + stateBytes(input.content) > budget) {
      throw refuse('inbox_full', `The inbox of "${this.id.agentId}" holds its ${budget} bytes of pending content.`, {
        field: 'to',
        cap_bytes: budget,
      });
    }
  }

  /** Returns true when the message came from this agent's leader and cleared a pending review or request. */
  private deliver(input: DeliverInput): boolean {
    if (this.inbox.has(input.message_id)) return false;
    this.inbox.push('message', input.from_agent_id, input.content, input.message_id, Date.now(), input.fingerprint);
    this.events.emit(
      'send_message',
      { message_id: input.message_id, to: this.id.agentId, bytes: textBytes(input.content) },
      input.from_agent_id,
    );
    if (input.from_agent_id !== this.id.leaderId) return false;
    return this.clearByLeader(input.message_id);
  }

  /** The leader answered: a pending review is acknowledged, a termination request is turned down. */
  clearByLeader(messageId: string | null, only?: 'review' | 'termination'): boolean {
    const d = this.data;
    const review = d.review.pending && only !== 'termination';
    const request = d.termination_requested && only !== 'review';
    const cleared = review || request;
    if (review) {
      d.review = { pending: false, ts: null, detail: d.review.detail };
      this.events.emit('review.acknowledged', { message_id: messageId });
    }
    if (request) {
      d.termination_requested = false;
      this.events.emit('completion.rework', { message_id: messageId });
    }
    if (cleared) this.events.emit('status', { state: this.status });
    return cleared;
  }

  // signal_review and request_termination

  checkSignalReview(detail: Text): void {
    this.checkAlive();
    // A stored detail was checked by the gateway before it was stored.
    const problem = typeof detail === 'string' ? reviewDetailProblem(detail) : null;
    if (problem) throw refuse('envelope_missing', problem.message, { field: 'detail', reason: problem.reason });
    this.checkEventsWritable();
  }

  /** signal_review: pending now; its leader (a person, for the root) and the run's directory hear it before the answer. */
  async signalReview(detail: Text): Promise<SignalReviewResult> {
    const superseded = this.data.review.pending;
    this.data.review = { pending: true, ts: Date.now(), detail };
    this.data.last_status_detail = detail;
    this.events.emit('status', { state: 'review_pending', superseded });
    this.events.emit('completion.reported', { detail });
    await this.report('review', detail, detail);
    return { recorded: true, review_pending: true, leader_id: this.id.leaderId };
  }

  checkRequestTermination(): void {
    this.checkAlive();
    const plan = this.data.plan;
    if (plan && !isFinished(plan.tasks)) {
      const unfinished = plan.tasks.filter((t) => t.status !== 'done' && t.status !== 'failed').map((t) => t.id);
      throw refuse('plan_incomplete', `Plan ${plan.plan_id} still has unfinished tasks: ${unfinished.join(', ')}.`, {
        plan_id: plan.plan_id,
        unfinished,
      });
    }
    this.checkEventsWritable();
  }

  /** request_termination: asked; its leader (a person, for the root) and the run's directory hear it before the answer. */
  async requestTermination(detail: Text | undefined): Promise<RequestTerminationResult> {
    this.data.termination_requested = true;
    if (detail) this.data.last_status_detail = detail;
    this.events.emit('status', { state: 'termination_requested', detail: detail ?? null });
    const text = detail ?? '(no detail given)';
    await this.report('termination', text, prefixed('[TERMINATION REQUESTED] ', text));
    return { recorded: true, termination_requested: true, leader_id: this.id.leaderId };
  }

  /**
   * A report reaches whoever decides on it before the call answers: the root's goes to the run (its person), a
   * member's to its leader's inbox with its mirror; the run's directory hears the new status beside it.
   */
  private async report(kind: 'review' | 'termination', detail: Text, inboxContent: Text): Promise<void> {
    const directory = statusToDirectory(this);
    if (this.isRoot) await tell(runWorkflowId(this.id.runId), rootReportSignal, { kind, detail, ts: Date.now() });
    else await tellLeader(this, { patch: {}, inbox: { kind: kind === 'review' ? 'review_report' : 'termination_request', content: inboxContent, message_id: newId('msg') } });
    await directory;
  }

  // termination, target side

  postTerminate(force: boolean): boolean {
    const t = this.data.terminate;
    if (t.posted || t.consumed) return false;
    t.posted = true;
    t.posted_at = Date.now();
    const text = force
      ? '[TERMINATE] Your leader ended your work (forced). Stop now.'
      : '[TERMINATE] Your leader approved your work. Stop now.';
    this.inbox.push('terminate', this.id.leaderId, text, newId('msg'), Date.now());
    return true;
  }

  /** Milliseconds until an unconsumed terminate sentinel forces the runtime down, or null. */
  graceRemaining(): number | null {
    const t = this.data.terminate;
    if (!t.posted || t.consumed || t.posted_at === null) return null;
    return Math.max(0, t.posted_at + this.limits.terminateGraceSeconds * 1000 - Date.now());
  }

  consumeTerminate(reason: 'sentinel' | 'watchdog_grace'): void {
    if (this.data.terminate.consumed) return;
    this.data.terminate.consumed = true;
    if (reason === 'watchdog_grace') this.events.emit('terminate.forced', { reason: 'watchdog_grace' });
    this.complete({ stop_reason: reason === 'sentinel' ? 'end_turn' : 'cancelled' });
  }

  /** Records the end of this agent's lifecycle, once, whichever way it ended. */
  complete(data: Record<string, unknown>): void {
    if (this.data.completed) return;
    this.data.completed = true;
    this.events.emit('agent_completed', data);
  }

  checkAck(upTo: number): void {
    if (!Number.isInteger(upTo) || upTo < 0) throw refuse('invalid_input', 'up_to must be a sequence number.', { field: 'up_to' });
  }

  /** Acknowledged inbox items are the delivery side of send_message. */
  ack(upTo: number): { acked_through: number; terminated?: true } {
    // Not a sign of life (the notes: a tool call or a delivery is): a stalled agent's runtime takes in the watchdog's
    // own reminders too, and counting that reset its clock at every nudge, so it never reached a person. But
    // something reads its inbox: it is driven.
    this.data.driven = true;
    for (const item of this.inbox.ack(upTo)) {
      this.events.emit('agent_input', { message_id: item.message_id, kind: item.kind, from: item.from });
      if (item.kind === 'terminate') this.consumeTerminate('sentinel');
    }
    const acked_through = this.data.inbox.acked_through;
    return this.status === 'terminated' ? { acked_through, terminated: true } : { acked_through };
  }

  /** A tool call of its own, which the gateway marked: a sign of life, and something drives it. */
  driven(): void {
    this.data.driven = true;
    this.onActivity();
  }

  // What the runtime reads, and what the run and its leader tell it

  inboxView(after: number, limit: number): InboxView {
    const plan = this.data.plan;
    return {
      items: this.inbox.after(after, limit),
      acked_through: this.data.inbox.acked_through,
      status: this.status,
      health: healthOf(this),
      plan: plan
        ? { plan_id: plan.plan_id, tasks: plan.tasks.map((t) => ({ id: t.id, role: t.role, status: t.status, agent_id: t.agent_id ?? null, depends_on: t.depends_on })) }
        : null,
    };
  }

  launchView(): LaunchView {
    return {
      identity: this.id,
      launch: this.data.launch_spec,
      // Before its first launch an agent is about to get generation 1.
      generation: Math.max(1, this.data.launch_gen ?? 0),
      issuedAt: this.data.launched_at ?? workflowInfo().startTime.getTime(),
      terminated: this.status === 'terminated',
    };
  }

  /** Words from Dipper itself (a question passed to it, a deadline, an answer): once per id. */
  systemMessage({ message_id, content }: { message_id: string; content: Text }): InboxNews | undefined {
    if (this.inbox.has(message_id)) return undefined;
    this.inbox.push('system', null, content, message_id, Date.now());
    return this.newsOf(message_id);
  }

  /** A delivery's answer about the item it put (types.ts, InboxNews). */
  private newsOf(messageId: string): InboxNews | undefined {
    const news = this.inbox.newsOf(messageId);
    return news && { ...news, status: this.status };
  }

  runEnded(): void {
    // Every agent's lifecycle ends with one agent_completed; here the run ended around it.
    this.complete({ stop_reason: this.data.termination_requested ? 'end_turn' : 'cancelled', run_ended: true });
    this.data.run_ended = true;
  }

  leaderEnded(): void {
    if (this.status === 'terminated') return;
    this.data.leader_ended = true;
    this.events.emit('terminate.forced', { reason: 'leader_terminated' });
    this.complete({ stop_reason: 'cancelled', leader_terminated: true });
  }
}
