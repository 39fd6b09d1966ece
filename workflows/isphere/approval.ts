import { tellPeople } from '../notify';
import { ActivityFailure, ApplicationFailure, condition, log, proxyActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { IsphereActivities } from '../../activities/isphere/send';
import type { AuditEntry } from '../../src/common/stores/audit';
import { systemMessageSignal } from '../agent/messages';
import { refuse } from '../errors';
import { EventBuffer } from '../events';
import { agentWorkflowId, hostQueue, runWorkflowId } from '../ids';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import { approvalClosedSignal, approvalOpenedSignal } from '../run/messages';
import { statusKey } from '../searchAttributes';
import { tell } from '../signals';
import { ApprovalState, type Refusal } from './approvalState';
import * as m from './messages';

/** Checks that must hold before a send starts: a few quick attempts, then the answer is "not now". */
const quick = proxyActivities<IsphereActivities>({ startToCloseTimeout: '15s', retry: { initialInterval: '200ms', maximumAttempts: 3 } });
/** The outcome record is written however long it takes: the send happened. */
const lasting = proxyActivities<IsphereActivities>({ startToCloseTimeout: '30s', retry: { initialInterval: '500ms', maximumInterval: '10s' } });

/** What the workflow's steps share: the state, the event buffer, and how the requester is told. */
interface Ctx {
  a: ApprovalState;
  events: EventBuffer;
  /** The target as a person reads it, and what the approval is bound to. */
  target: string;
  hash: string;
  tellRequester(suffix: string, words: string): Promise<void>;
}

/**
 * One approval-gated iSphere send, from the dry run that asks for it to
 * the send it allows. It waits for a person's decision under an expiry,
 * tells the requesting agent the outcome in its inbox, and when the agent
 * sends with its id, makes the one send: the intent recorded before
 * anything reaches the bridge, a fixed client message id, a lookup before
 * any retry, and the outcome recorded before the agent is answered. It
 * ends with its run. Its statuses move as approvalState.ts's TRANSITIONS
 * allow.
 */
export async function isphereApprovalWorkflow(input: m.ApprovalInput): Promise<m.ApprovalView> {
  const { runId, approvalId } = input;
  const a = new ApprovalState(input, Date.now());
  const events = new EventBuffer(runId, a.requester);
  void events.flushForever(false);
  // The gateway's waiting send call and the requester's long poll listen on these.
  const waiters = `${runId}/${approvalId}`;
  a.onStatus = (status) => {
    upsertSearchAttributes([{ key: statusKey, value: status }]);
    events.wake(waiters);
  };
  const ctx: Ctx = {
    a,
    events,
    target: `${input.binding.target.display_name ?? input.binding.target.target_id} (${input.binding.target.target_type} ${input.binding.target.target_id})`,
    hash: input.binding.content_sha256 ? `content_sha256 ${input.binding.content_sha256}` : `file_sha256 ${input.binding.file_sha256}`,
    async tellRequester(suffix, words) {
      await tell(agentWorkflowId(runId, a.requester), systemMessageSignal, { message_id: `${approvalId}-${suffix}`, content: `[ISPHERE APPROVAL] ${words}` });
      events.wake(`${runId}/${a.requester}`);
    },
  };

  setHandler(m.approvalQuery, () => a.view(), { description: 'The approval: what it binds, its decision, and the send it allowed.' });
  setHandler(wakeSignal, () => undefined);
  setHandler(m.decideUpdate, (d) => decide(ctx, d), { validator: (d) => checkDecision(a, d) });
  setHandler(m.requestSendUpdate, (req) => requestSend(a, req), { validator: (req) => a.checkSend(req, Date.now()) });
  setHandler(m.approvalRunEndedSignal, () => a.endRun());

  upsertSearchAttributes([{ key: statusKey, value: 'pending' }]);
  setCurrentDetails(`${input.binding.tool} to ${ctx.target}: waiting for a person's decision.`);
  if (!(await tell(runWorkflowId(runId), approvalOpenedSignal, { approval_id: approvalId }))) a.endRun();
  else {
    events.emit('isphere.approval_requested', { approval_id: approvalId, tool: input.binding.tool, target: input.binding.target, decide_by: a.decideBy });
    if (input.notify) void announce(ctx);
    tellPeople(
      {
        id: `${runId}/${approvalId}`,
        kind: 'approval',
        run_id: runId,
        title: `${input.requester.role} (${input.requester.agent_id}) asks to send on iSphere: ${input.binding.tool} to ${ctx.target}`,
        text: `Approve or reject it by ${new Date(a.decideBy).toISOString()}. Nothing is sent before a person approves.${input.binding.content_sha256 ? ` Content sha256: ${input.binding.content_sha256}.` : ''}`,
        path: '/approvals',
      },
      events,
    );
  }

  if (!(await condition(() => a.status !== 'pending', input.decisionMs)) && a.status === 'pending') {
    a.expire();
    events.emit('isphere.approval_expired', { approval_id: approvalId, stage: 'decision' });
    await ctx.tellRequester('expired', `${approvalId} for ${input.binding.tool} to ${ctx.target} expired: nobody decided within ${Math.round(input.decisionMs / 1000)} s. Nothing was sent.`);
  }
  // Handlers move the status while the workflow waits: read it through now(), not a narrowed local.
  const now = (): m.ApprovalStatus => a.status;
  // A decision and a send call can land in one workflow task (both waited out a worker restart): the approval is then
  // already sending when the wait for a decision ends, and that send must be made, not dropped with its caller waiting.
  while (now() === 'approved' || now() === 'sending') {
    if (now() === 'approved') await condition(() => a.status !== 'approved', Math.max(0, a.useBy! - Date.now()));
    if (now() === 'approved') {
      a.expire();
      events.emit('isphere.approval_expired', { approval_id: approvalId, stage: 'use' });
      await ctx.tellRequester('expired', `${approvalId} expired unused; nothing was sent.`);
    } else if (now() === 'sending') await send(ctx);
  }
  if (now() === 'done') {
    setCurrentDetails(`Sent: ${a.outcome!.result}.`);
    await condition(() => a.runEnded, input.receiptMs);
  } else setCurrentDetails(`Over: ${a.status}.`);
  await tell(runWorkflowId(runId), approvalClosedSignal, { approval_id: approvalId });
  await events.drain();
  return a.view();
}

/** The decide validator; a decision without the gateway's proof is also logged, as someone went round the gateway. */
function checkDecision(a: ApprovalState, d: m.Decision): void {
  try {
    a.checkDecide(d, Date.now());
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === 'unproven_decision') log.warn('refused a decision without a valid proof', { approval_id: a.input.approvalId });
    throw err;
  }
}

/** A person's decision: recorded, then told to the requester (a repeated webhook delivery is answered as such). */
async function decide({ a, events, target, hash, tellRequester }: Ctx, d: m.Decision): Promise<{ status: m.ApprovalStatus; already: boolean }> {
  const { approvalId, binding } = a.input;
  const applied = a.decide(d, Date.now());
  if (applied === 'repeat') return { status: a.status, already: true };
  if (applied === 'approved') {
    events.emit('isphere.approval_approved', { approval_id: approvalId, approver: d.approver, via: d.via });
    const what = binding.tool === 'isphere_send_message' ? 'text' : 'file';
    await tellRequester(
      'decision',
      `${approvalId} was approved by ${d.approver} for ${binding.tool} to ${target}; ${hash}. Call ${binding.tool} again with the same target and ${what}, dry_run false and approval_id ${approvalId} before ${new Date(a.useBy!).toISOString()}.`,
    );
  } else {
    events.emit('isphere.approval_rejected', { approval_id: approvalId, approver: d.approver, via: d.via, reason: d.reason ?? null });
    await tellRequester('decision', `${approvalId} for ${binding.tool} to ${target} was rejected by ${d.approver}: ${d.reason ?? ''}`);
  }
  return { status: a.status, already: false };
}

/** A send call: starts the send (the main loop makes it) or attaches to it, and waits for its outcome. */
async function requestSend(a: ApprovalState, req: m.SendRequest): Promise<m.SendOutcome & { replayed: boolean; approver: string }> {
  const { repeat, attempt } = a.beginSend(req);
  await condition(() => a.answerFor(attempt) !== undefined);
  const answer = a.answerFor(attempt)!;
  if ('refusal' in answer) throw refuse(answer.refusal.code, answer.refusal.message, answer.refusal.extra);
  return { ...answer.outcome, replayed: repeat, approver: a.decision!.approver };
}

/** Tells the approval system, retrying until the decision is due; a failure is an event, never a block. */
async function announce({ a, events }: Ctx): Promise<void> {
  const { runId, approvalId, requester, binding, words, decisionMs } = a.input;
  const notifier = proxyActivities<IsphereActivities>({
    startToCloseTimeout: '15s',
    scheduleToCloseTimeout: Math.max(1000, decisionMs),
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' },
  });
  try {
    const sent = await notifier.isphereNotify({ runId, approvalId, requester, binding, words, decideBy: a.decideBy });
    if (sent === 'sent') events.emit('isphere.approval_announced', { approval_id: approvalId });
  } catch {
    events.emit('isphere.approval_announce_failed', { approval_id: approvalId });
  }
}

/** The record of the send's intent (before anything leaves) or outcome (before the agent is answered). */
function auditEntry(a: ApprovalState, kind: 'intent' | 'outcome', o: m.SendOutcome | null): AuditEntry {
  const input = a.input;
  return {
    record_id: `${input.approvalId}/${kind}`,
    kind,
    run_id: input.runId,
    requester: a.requester,
    tool: input.binding.tool,
    target: input.binding.target,
    content_sha256: input.binding.content_sha256,
    file_sha256: input.binding.file_sha256,
    file_size_bytes: input.binding.file_size_bytes,
    approval_id: input.approvalId,
    approver: a.decision!.approver,
    approved_via: a.decision!.via,
    key_sha256: a.sendKey || null,
    client_message_id: clientMessageId(a),
    source: input.source,
    result: o?.result ?? null,
    reconciled: o?.reconciled ?? false,
    message_ref: o?.message_ref ?? o?.file_ref ?? null,
    requested_at: new Date(a.requestedAt).toISOString(),
    approved_at: new Date(a.decision!.at).toISOString(),
    at: new Date(Date.now()).toISOString(),
  };
}

const clientMessageId = (a: ApprovalState) => `dip-${a.input.approvalId}`;

/** The one send: checks, the intent, the send with its lookups, the outcome; ends done, or back to approved with why it could not begin. */
async function send({ a, events }: Ctx): Promise<void> {
  const ready = await quick.isphereBridgeReady().catch(() => 'unavailable' as const);
  if (ready !== 'ready') return a.sendRefused(notNow(ready));
  try {
    await quick.isphereAuditAppend(auditEntry(a, 'intent', null), a.provenDecision);
  } catch (err) {
    const type = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
    return a.sendRefused(
      type === 'IdempotencyConflict'
        ? { code: 'idempotency_conflict', message: 'This idempotency key was already used for another send of this tool in this run.', extra: {} }
        : type === 'DecisionUnproven'
          ? { code: 'approval_required', message: 'The decision on this approval carries no valid proof that a person made it, so nothing was sent.', extra: { approval_status: 'unproven' } }
          : { code: 'audit_unavailable', message: 'The audit record could not be written, so nothing was sent; try again.', extra: { retryable: true } },
    );
  }
  const approvalId = a.input.approvalId;
  events.emit('isphere.send_started', { approval_id: approvalId, client_message_id: clientMessageId(a) });
  const o = await sendWithLookups(a);
  const written = await lasting.isphereAuditAppend(auditEntry(a, 'outcome', o));
  events.emit('isphere.send_finished', { approval_id: approvalId, result: o.result, reconciled: o.reconciled, audit_seq: written.seq });
  a.sendDone(o, written.seq);
}

/** The bridge send, its attempts looking the send up first; when every attempt ends without an answer, one last look decides. */
async function sendWithLookups(a: ApprovalState): Promise<m.SendOutcome> {
  const input = a.input;
  const id = clientMessageId(a);
  try {
    const attempts = proxyActivities<IsphereActivities>({
      // A file is read on the run's host (it lies in the run's folders there).
      ...(input.filePath && input.host ? { taskQueue: hostQueue(workflowInfo().taskQueue, input.host) } : {}),
      startToCloseTimeout: input.attemptMs,
      scheduleToCloseTimeout: input.reconcileMs,
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', nonRetryableErrorTypes: [] },
    });
    return input.binding.tool === 'isphere_send_file'
      ? await attempts.isphereSendFile({
          runId: input.runId,
          clientMessageId: id,
          target: input.binding.target,
          filePath: input.filePath!,
          fileSha256: input.binding.file_sha256!,
          fileSize: input.binding.file_size_bytes!,
          caption: input.words,
          decision: a.provenDecision,
        })
      : await attempts.isphereSendMessage({ runId: input.runId, clientMessageId: id, target: input.binding.target, words: input.words!, contentSha256: input.binding.content_sha256!, decision: a.provenDecision });
  } catch {
    const found = await quick.isphereLookupSend(id).catch(() => undefined);
    if (found === undefined) return { result: 'unknown', message_ref: null, file_ref: null, reconciled: false, reason: 'the bridge could not say whether it took the send' };
    return found
      ? { result: 'sent', message_ref: found.message_ref, file_ref: found.file_ref, reconciled: true, reason: null }
      : { result: 'failed', message_ref: null, file_ref: null, reconciled: true, reason: 'the bridge never took the send' };
  }
}

/** The bridge cannot take a send now; the approval is not used up. */
function notNow(ready: 'not_logged_in' | 'unavailable'): Refusal {
  return ready === 'not_logged_in'
    ? { code: 'not_logged_in', message: 'No one is logged in to the iSphere client; a person must log in by hand. The approval stays good until its use-by time.', extra: {} }
    : { code: 'source_unavailable', message: 'The iSphere bridge cannot be reached. The approval stays good until its use-by time.', extra: { retryable: true } };
}
