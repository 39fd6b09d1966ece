import { proven, type DecisionClaim, type DecisionProof } from '../../src/common/pure/decisionProof';
import { refuse } from '../errors';
import { approvalClaim } from './messages';
import type * as m from './messages';

/**
 * Every move an approval may make. An approval starts pending; a person
 * approves or rejects it, or its decision time runs out; an approved one
 * starts its one send (sending), which either cannot begin (back to
 * approved, still good until its use-by time) or ends (done); an unused one
 * expires or ends with its run. The last four have no way out.
 */
export const TRANSITIONS: Readonly<Record<m.ApprovalStatus, readonly m.ApprovalStatus[]>> = {
  pending: ['approved', 'rejected', 'expired', 'cancelled'],
  approved: ['sending', 'expired', 'cancelled'],
  sending: ['approved', 'done'],
  rejected: [],
  expired: [],
  cancelled: [],
  done: [],
};

export type Refusal = { code: string; message: string; extra: Record<string, unknown> };

const sameBinding = (a: m.Binding, b: m.Binding) =>
  a.tool === b.tool &&
  a.target.target_type === b.target.target_type &&
  a.target.target_id === b.target.target_id &&
  a.content_sha256 === b.content_sha256 &&
  a.file_sha256 === b.file_sha256 &&
  a.file_size_bytes === b.file_size_bytes;

/**
 * One approval's state and its rules. Methods named check* refuse a call
 * without changing anything (they run in Update validators); the others
 * apply what was accepted, and every status change goes through move(),
 * which holds it to TRANSITIONS.
 */
export class ApprovalState {
  status: m.ApprovalStatus = 'pending';
  decision: m.ApprovalView['decision'] = null;
  useBy: number | null = null;
  outcome: m.SendOutcome | null = null;
  auditSeq: number | null = null;
  /** The idempotency key's hash of the send under way or made ('' for none); null while no send is. */
  sendKey: string | null = null;
  /** Sends that could not begin so far; the gateway's update id carries it, so a call after one starts afresh. */
  attempt = 0;
  /** Why the send of an attempt could not begin: its callers are answered with it. */
  refusal: (Refusal & { attempt: number }) | null = null;
  runEnded = false;
  /** The decision as it came, proof included (the view shows it without). */
  private taken: m.Decision | null = null;
  /** Webhook deliveries already decided: the same one again is answered, not decided twice. At most one, since a decision is final. */
  private readonly deliveries = new Set<string>();
  /** Told of every status change (the workflow sets the search attribute and wakes the waiting calls). */
  onStatus: (status: m.ApprovalStatus) => void = () => undefined;

  constructor(
    readonly input: m.ApprovalInput,
    readonly requestedAt: number,
  ) {}

  get decideBy(): number {
    return this.requestedAt + this.input.decisionMs;
  }

  get requester(): string {
    return this.input.requester.agent_id;
  }

  /** To `next`, if the table allows it (and the status is one of `from`, when given). */
  private move(next: m.ApprovalStatus, from?: m.ApprovalStatus): void {
    // A bug, not a refusal: the workflow task fails (and is retried) rather than an approval doing what it must not.
    if (!TRANSITIONS[this.status].includes(next) || (from !== undefined && this.status !== from)) {
      throw new Error(`Approval ${this.input.approvalId}: ${this.status} cannot become ${next} here.`);
    }
    this.status = next;
    this.onStatus(next);
  }

  isRepeatDelivery(d: m.Decision): boolean {
    return d.delivery_id !== undefined && this.deliveries.has(d.delivery_id);
  }

  checkDecide(d: m.Decision, now: number): void {
    // Only a decision the gateway vouches for is taken: an Update sent to Temporal by anyone else never enters history.
    if (!proven(this.claimOf(d), d.proof, this.input.decisionKeys ?? [])) {
      throw refuse('unproven_decision', 'This decision does not carry the gateway\'s proof that an operator or approval system made it; nothing was decided.');
    }
    // The same webhook delivery again is answered, whatever happened since.
    if (this.isRepeatDelivery(d)) return;
    if (this.status !== 'pending') throw refuse('already_decided', `Approval ${this.input.approvalId} is ${this.status}; it can no longer be decided.`, { status: this.status });
    if (now >= this.decideBy) throw refuse('already_decided', `Approval ${this.input.approvalId} expired.`, { status: 'expired' });
    // People decide, never the agent that asked (an operator name never is an agent id; this holds it so).
    if (d.approver === this.requester) throw refuse('approver_is_requester', 'The agent that asked for the send cannot approve it.');
    if (d.decision === 'reject' && !d.reason?.trim()) throw refuse('invalid_input', 'A rejection needs a reason.', { field: 'reason' });
  }

  /** What a decision must be signed over: this approval, what it sends, and the decision as given. */
  private claimOf(d: m.Decision): DecisionClaim {
    return approvalClaim(this.input.runId, this.input.approvalId, this.input.binding, d, typeof d.proof?.at === 'number' ? d.proof.at : 0);
  }

  /** The decision taken and its proof, for the activities that act on it to check again. */
  get provenDecision(): { claim: DecisionClaim; proof: DecisionProof } | undefined {
    return this.taken?.proof ? { claim: this.claimOf(this.taken), proof: this.taken.proof } : undefined;
  }

  /** Applies a person's decision; a repeated webhook delivery changes nothing. */
  decide(d: m.Decision, at: number): 'repeat' | 'approved' | 'rejected' {
    if (this.isRepeatDelivery(d)) return 'repeat';
    this.move(d.decision === 'approve' ? 'approved' : 'rejected', 'pending');
    this.taken = d;
    if (d.delivery_id !== undefined) this.deliveries.add(d.delivery_id);
    this.decision = { approver: d.approver, via: d.via, decision: d.decision, reason: d.reason ?? null, at };
    if (d.decision === 'reject') return 'rejected';
    this.useBy = at + this.input.useMs;
    return 'approved';
  }

  checkSend(req: m.SendRequest, now: number): void {
    const id = this.input.approvalId;
    const refused = (message: string, status: string) => refuse('approval_required', message, { approval_status: status });
    if (req.requester !== this.requester) throw refused(`Approval ${id} was given to another agent.`, 'mismatch');
    if (this.status === 'pending') throw refused(`Approval ${id} is still waiting for a person's decision.`, 'pending');
    if (this.status === 'rejected' || this.status === 'expired' || this.status === 'cancelled') throw refused(`Approval ${id} is ${this.status}.`, this.status);
    if (!sameBinding(req.binding, this.input.binding)) throw refused(`Approval ${id} was given for another target, text or file; a new dry run asks for this one.`, 'mismatch');
    if (this.sendKey === null) {
      if (this.useBy !== null && now >= this.useBy) throw refused(`Approval ${id} expired unused.`, 'expired');
      return;
    }
    // The approval's one send is made or under way: the same key (or none, again) attaches to it; another key is a second send.
    if ((req.binding.key_sha256 ?? '') !== this.sendKey) throw refused(`Approval ${id} was already used.`, 'used');
  }

  /** A send call was accepted: it starts the send, or attaches to the one under way or made. Returns the attempt it waits on. */
  beginSend(req: m.SendRequest): { repeat: boolean; attempt: number } {
    const repeat = this.sendKey !== null;
    if (!repeat) {
      this.move('sending', 'approved');
      this.sendKey = req.binding.key_sha256 ?? '';
    }
    return { repeat, attempt: this.attempt };
  }

  /** The send could not begin (no session, no audit): its callers are refused, and the approval stays good until its use-by time. */
  sendRefused(r: Refusal): void {
    this.move('approved', 'sending');
    this.refusal = { attempt: this.attempt, ...r };
    this.attempt++;
    this.sendKey = null;
  }

  sendDone(outcome: m.SendOutcome, auditSeq: number): void {
    this.move('done', 'sending');
    this.outcome = outcome;
    this.auditSeq = auditSeq;
  }

  /** What a send call waiting on `attempt` is answered: nothing yet, the outcome, or why its send could not begin. */
  answerFor(attempt: number): { outcome: m.SendOutcome } | { refusal: Refusal } | undefined {
    if (this.status === 'done') return { outcome: this.outcome! };
    if (this.refusal?.attempt === attempt) return { refusal: this.refusal };
    return undefined;
  }

  /** Its time ran out: undecided, or approved and not used. */
  expire(): void {
    this.move('expired');
  }

  /** The run ended: a pending or unused approval is cancelled; a send under way finishes first. */
  endRun(): void {
    this.runEnded = true;
    if (this.status === 'pending' || this.status === 'approved') this.move('cancelled');
  }

  view(): m.ApprovalView {
    return {
      approval_id: this.input.approvalId,
      run_id: this.input.runId,
      requester: this.input.requester,
      binding: this.input.binding,
      ...(this.input.targetDetails ? { target_details: this.input.targetDetails } : {}),
      words: this.input.words,
      status: this.status,
      requested_at: this.requestedAt,
      decide_by: this.decideBy,
      decision: this.decision,
      use_by: this.useBy,
      outcome: this.outcome,
      audit_seq: this.auditSeq,
      attempt: this.attempt,
    };
  }
}
