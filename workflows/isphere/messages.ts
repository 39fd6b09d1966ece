import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Text } from '../../src/common/pure/content';
import type { DecisionClaim, DecisionProof } from '../../src/common/pure/decisionProof';

/**
 * One approval-gated iSphere send: what was asked, who decides, and what
 * happened. The gateway starts it at a dry run; a person decides in the
 * console or through the webhook; the agent's real send runs here.
 */

export interface ApprovalTarget {
  target_type: 'contact' | 'group' | 'conversation';
  target_id: string;
  display_name: string | null;
}

/** What an approval is bound to: a send is refused unless it asks for exactly this. */
export interface Binding {
  tool: 'isphere_send_message' | 'isphere_send_file';
  target: ApprovalTarget;
  content_sha256: string | null;
  file_sha256: string | null;
  file_size_bytes: number | null;
  /** sha256 of the idempotency key, or null without one. */
  key_sha256: string | null;
}

export interface ApprovalInput {
  runId: string;
  approvalId: string;
  requester: { agent_id: string; role: string };
  binding: Binding;
  /** The exact words to send (a reference when long): what the approver reads and what is sent. */
  words: Text | null;
  /** Where the send goes; fixed for the approval. */
  source: 'bridge';
  /** A person's decision is awaited this long. */
  decisionMs: number;
  /** An approval unused this long after the decision expires. */
  useMs: number;
  /** After its send the workflow answers repeats this long, then closes. */
  receiptMs: number;
  /** Past this, a send whose outcome stays unknown is recorded `unknown`. */
  reconcileMs: number;
  /** The longest one send attempt may take (a lookup, the send, a wait and a lookup); a worker dying mid-attempt is noticed after it. */
  attemptMs: number;
  /** Announce the request to the configured approval system (DIPPER_ISPHERE_APPROVAL_NOTIFY_URL). */
  notify?: boolean;
  /** The public keys (hex) whose signature makes a decision a person's (src/common/pure/decisionProof.ts); none: no decision is taken. */
  decisionKeys?: string[];
  /** A file send: the file's real path on the run's host, and that host when the run is pinned to one. */
  filePath?: string;
  host?: string;
  /** What else the source knew of the target when the send was planned (department, account, members): for the person who decides. */
  targetDetails?: Record<string, string | number | null>;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled' | 'sending' | 'done';
export type SendResult = 'sent' | 'rejected' | 'failed' | 'blocked' | 'unknown';

export interface SendOutcome {
  result: SendResult;
  message_ref: string | null;
  file_ref: string | null;
  reconciled: boolean;
  /** Why, for anything but sent. */
  reason: string | null;
}

export interface ApprovalView {
  approval_id: string;
  run_id: string;
  requester: { agent_id: string; role: string };
  binding: Binding;
  /** What else the source knew of the target when the send was planned; absent for approvals from before. */
  target_details?: Record<string, string | number | null>;
  words: Text | null;
  status: ApprovalStatus;
  requested_at: number;
  /** The decision must come before this (ms since the epoch). */
  decide_by: number;
  decision: { approver: string; via: string; decision: 'approve' | 'reject'; reason: string | null; at: number } | null;
  /** An approved send must be made before this. */
  use_by: number | null;
  outcome: SendOutcome | null;
  /** The audit chain's seq of the outcome record, once written. */
  audit_seq: number | null;
  /** Sends that could not begin so far; a send call's update id includes it, so a call after one starts afresh. */
  attempt: number;
}

export interface Decision {
  approver: string;
  via: 'console' | 'api' | 'webhook';
  decision: 'approve' | 'reject';
  reason?: string;
  /** The webhook's delivery id: the same delivery again is answered `already`, not decided twice. */
  delivery_id?: string;
  /** The gateway's signature over this decision (src/common/pure/decisionProof.ts): without a valid one nothing is decided. */
  proof?: DecisionProof;
}

/** What a decision on an approval vouches for: the approval, the hash of what it sends, who decided what, and when. */
export function approvalClaim(runId: string, approvalId: string, binding: Binding, d: Decision, at: number): DecisionClaim {
  return {
    kind: 'isphere_approval',
    run_id: runId,
    subject_id: approvalId,
    content_sha256: binding.content_sha256,
    file_sha256: binding.file_sha256,
    decision: d.decision,
    decider: d.approver,
    via: d.via,
    reason: d.reason ?? null,
    delivery_id: d.delivery_id ?? null,
    at,
  };
}

export interface SendRequest {
  requester: string;
  binding: Binding;
}

export const approvalQuery = defineQuery<ApprovalView, []>('approval');
export const decideUpdate = defineUpdate<{ status: ApprovalStatus; already: boolean }, [Decision]>('decide');
/** The real send: answered with its outcome once the send is over (a repeat with the same update id attaches). */
export const requestSendUpdate = defineUpdate<SendOutcome & { replayed: boolean; approver: string }, [SendRequest]>('requestSend');
/** The run ended: a pending or unused approval is cancelled; a send under way finishes first. */
export const approvalRunEndedSignal = defineSignal('approvalRunEnded');
