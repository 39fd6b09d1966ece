import { ActivityFailure, ApplicationFailure, condition, proxyActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { IsphereActivities } from '../../activities/isphere/send';
import type { AuditEntry } from '../../activities/audit';
import { systemMessageSignal } from '../agent/messages';
import { refuse } from '../errors';
import { EventBuffer } from '../events';
import { agentWorkflowId, hostQueue, runWorkflowId } from '../ids';
import { wakeSignal } from '../interceptors';
import { approvalClosedSignal, approvalOpenedSignal } from '../run/messages';
import { statusKey } from '../searchAttributes';
import { tell } from '../signals';
import * as m from './messages';

/** Checks that must hold before a send starts: a few quick attempts, then the answer is "not now". */
const quick = proxyActivities<IsphereActivities>({ startToCloseTimeout: '15s', retry: { initialInterval: '200ms', maximumAttempts: 3 } });
/** The outcome record is written however long it takes: the send happened. */
const lasting = proxyActivities<IsphereActivities>({ startToCloseTimeout: '30s', retry: { initialInterval: '500ms', maximumInterval: '10s' } });

const sameBinding = (a: m.Binding, b: m.Binding) =>
  a.tool === b.tool &&
  a.target.target_type === b.target.target_type &&
  a.target.target_id === b.target.target_id &&
  a.content_sha256 === b.content_sha256 &&
  a.file_sha256 === b.file_sha256 &&
  a.file_size_bytes === b.file_size_bytes;

/**
 * One approval-gated iSphere send, from the dry run that asks for it to
 * the send it allows. It waits for a person's decision under an expiry,
 * tells the requesting agent the outcome in its inbox, and when the agent
 * sends with its id, makes the one send: the intent recorded before
 * anything reaches the bridge, a fixed client message id, a lookup before
 * any retry, and the outcome recorded before the agent is answered. It
 * ends with its run.
 */
export async function isphereApprovalWorkflow(input: m.ApprovalInput): Promise<m.ApprovalView> {
  const { runId, approvalId } = input;
  const requester = input.requester.agent_id;
  const events = new EventBuffer(runId, requester);
  void events.flushForever(false);
  // The gateway's waiting send call and the requester's long poll listen on these.
  const waiters = `${runId}/${approvalId}`;
  const inbox = `${runId}/${requester}`;

  const requestedAt = Date.now();
  const decideBy = requestedAt + input.decisionMs;
  let status: m.ApprovalStatus = 'pending';
  let decision: m.ApprovalView['decision'] = null;
  let useBy: number | null = null;
  let outcome: m.SendOutcome | null = null;
  let auditSeq: number | null = null;
  let sendKey: string | null = null;
  const deliveries = new Set<string>();
  let runEnded = false;
  /** Each start of the send that could not begin (no session, no audit) ends an attempt; the next call starts another. */
  let attempt = 0;
  let startRefusal: { attempt: number; code: string; message: string; extra: Record<string, unknown> } | null = null;

  const view = (): m.ApprovalView => ({
    approval_id: approvalId,
    run_id: runId,
    requester: input.requester,
    binding: input.binding,
    words: input.words,
    status,
    requested_at: requestedAt,
    decide_by: decideBy,
    decision,
    use_by: useBy,
    outcome,
    audit_seq: auditSeq,
    attempt,
  });
  const setStatus = (next: m.ApprovalStatus) => {
    status = next;
    upsertSearchAttributes([{ key: statusKey, value: next }]);
    events.wake(waiters);
  };
  const target = `${input.binding.target.display_name ?? input.binding.target.target_id} (${input.binding.target.target_type} ${input.binding.target.target_id})`;
  const hash = input.binding.content_sha256 ? `content_sha256 ${input.binding.content_sha256}` : `file_sha256 ${input.binding.file_sha256}`;
  const tellRequester = async (suffix: string, words: string) => {
    await tell(agentWorkflowId(runId, requester), systemMessageSignal, { message_id: `${approvalId}-${suffix}`, content: `[ISPHERE APPROVAL] ${words}` });
    events.wake(inbox);
  };

  setHandler(m.approvalQuery, view, { description: 'The approval: what it binds, its decision, and the send it allowed.' });
  setHandler(wakeSignal, () => undefined);

  setHandler(
    m.decideUpdate,
    async (d) => {
      if (d.delivery_id !== undefined && deliveries.has(d.delivery_id)) return { status, already: true };
      if (d.delivery_id !== undefined) deliveries.add(d.delivery_id);
      const at = Date.now();
      decision = { approver: d.approver, via: d.via, decision: d.decision, reason: d.reason ?? null, at };
      if (d.decision === 'approve') {
        useBy = at + input.useMs;
        setStatus('approved');
        events.emit('isphere.approval_approved', { approval_id: approvalId, approver: d.approver, via: d.via });
        await tellRequester(
          'decision',
          `${approvalId} was approved by ${d.approver} for ${input.binding.tool} to ${target}; ${hash}. Call ${input.binding.tool} again with the same target and ${input.binding.tool === 'isphere_send_message' ? 'text' : 'file'}, dry_run false and approval_id ${approvalId} before ${new Date(useBy).toISOString()}.`,
        );
      } else {
        setStatus('rejected');
        events.emit('isphere.approval_rejected', { approval_id: approvalId, approver: d.approver, via: d.via, reason: d.reason ?? null });
        await tellRequester('decision', `${approvalId} for ${input.binding.tool} to ${target} was rejected by ${d.approver}: ${d.reason ?? ''}`);
      }
      return { status, already: false };
    },
    {
      validator: (d) => {
        // The same webhook delivery again is answered, whatever happened since.
        if (d.delivery_id !== undefined && deliveries.has(d.delivery_id)) return;
        if (status !== 'pending') throw refuse('already_decided', `Approval ${approvalId} is ${status}; it can no longer be decided.`, { status });
        if (Date.now() >= decideBy) throw refuse('already_decided', `Approval ${approvalId} expired.`, { status: 'expired' });
        // People decide, never the agent that asked (an operator name never is an agent id; this holds it so).
        if (d.approver === requester) throw refuse('approver_is_requester', 'The agent that asked for the send cannot approve it.');
        if (d.decision === 'reject' && !d.reason?.trim()) throw refuse('invalid_input', 'A rejection needs a reason.', { field: 'reason' });
      },
    },
  );

  setHandler(
    m.requestSendUpdate,
    async (req) => {
      const repeat = sendKey !== null;
      const mine = attempt;
      if (!repeat) {
        sendKey = req.binding.key_sha256 ?? '';
        setStatus('sending');
      }
      await condition(() => status === 'done' || startRefusal?.attempt === mine);
      if (status !== 'done') throw refuse(startRefusal!.code, startRefusal!.message, startRefusal!.extra);
      return { ...outcome!, replayed: repeat, approver: decision!.approver };
    },
    {
      validator: (req) => {
        if (req.requester !== requester) throw refuse('approval_required', `Approval ${approvalId} was given to another agent.`, { approval_status: 'mismatch' });
        if (status === 'pending') throw refuse('approval_required', `Approval ${approvalId} is still waiting for a person's decision.`, { approval_status: 'pending' });
        if (status === 'rejected' || status === 'expired' || status === 'cancelled') {
          throw refuse('approval_required', `Approval ${approvalId} is ${status}.`, { approval_status: status });
        }
        if (!sameBinding(req.binding, input.binding)) {
          throw refuse('approval_required', `Approval ${approvalId} was given for another target, text or file; a new dry run asks for this one.`, { approval_status: 'mismatch' });
        }
        if (sendKey === null) {
          if (useBy !== null && Date.now() >= useBy) throw refuse('approval_required', `Approval ${approvalId} expired unused.`, { approval_status: 'expired' });
          return;
        }
        // The approval's one send is made or under way: the same key (or none, again) attaches to it; another key is a second send.
        if ((req.binding.key_sha256 ?? '') !== sendKey) throw refuse('approval_required', `Approval ${approvalId} was already used.`, { approval_status: 'used' });
      },
    },
  );

  setHandler(m.approvalRunEndedSignal, () => {
    runEnded = true;
    if (status === 'pending' || (status === 'approved' && sendKey === null)) setStatus('cancelled');
  });

  upsertSearchAttributes([{ key: statusKey, value: 'pending' }]);
  setCurrentDetails(`${input.binding.tool} to ${target}: waiting for a person's decision.`);
  if (!(await tell(runWorkflowId(runId), approvalOpenedSignal, { approval_id: approvalId }))) setStatus('cancelled');
  else {
    events.emit('isphere.approval_requested', { approval_id: approvalId, tool: input.binding.tool, target: input.binding.target, decide_by: decideBy });
    if (input.notify) void announce();
  }

  if (!(await condition(() => status !== 'pending', input.decisionMs)) && status === 'pending') {
    setStatus('expired');
    events.emit('isphere.approval_expired', { approval_id: approvalId, stage: 'decision' });
    await tellRequester('expired', `${approvalId} for ${input.binding.tool} to ${target} expired: nobody decided within ${Math.round(input.decisionMs / 1000)} s. Nothing was sent.`);
  }
  // Handlers change the status while the workflow waits: read it through now(), not a narrowed local.
  const now = (): m.ApprovalStatus => status;
  while (now() === 'approved') {
    await condition(() => status !== 'approved', Math.max(0, useBy! - Date.now()));
    if (now() === 'approved') {
      setStatus('expired');
      events.emit('isphere.approval_expired', { approval_id: approvalId, stage: 'use' });
      await tellRequester('expired', `${approvalId} expired unused; nothing was sent.`);
    } else if (now() === 'sending') {
      const refused = await send();
      if (refused) {
        // The send never began: the approval stays good until its use-by time, for a call that finds things ready.
        startRefusal = { attempt, ...refused };
        attempt++;
        sendKey = null;
        setStatus('approved');
      }
    }
  }
  if (now() === 'done') {
    setCurrentDetails(`Sent: ${outcome!.result}.`);
    await condition(() => runEnded, input.receiptMs);
  } else setCurrentDetails(`Over: ${status}.`);
  await tell(runWorkflowId(runId), approvalClosedSignal, { approval_id: approvalId });
  await events.drain();
  return view();

  /** Tells the approval system, retrying until the decision is due; a failure is an event, never a block. */
  async function announce(): Promise<void> {
    const notifier = proxyActivities<IsphereActivities>({
      startToCloseTimeout: '15s',
      scheduleToCloseTimeout: Math.max(1000, input.decisionMs),
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' },
    });
    try {
      const sent = await notifier.isphereNotify({ runId, approvalId, requester: input.requester, binding: input.binding, words: input.words, decideBy });
      if (sent === 'sent') events.emit('isphere.approval_announced', { approval_id: approvalId });
    } catch {
      events.emit('isphere.approval_announce_failed', { approval_id: approvalId });
    }
  }

  /** The one send: checks, the intent, the send with its lookups, the outcome; ends with status done, or says why it could not begin. */
  async function send(): Promise<{ code: string; message: string; extra: Record<string, unknown> } | null> {
    const clientMessageId = `dip-${approvalId}`;
    const entry = (kind: 'intent' | 'outcome', o: m.SendOutcome | null): AuditEntry => ({
      record_id: `${approvalId}/${kind}`,
      kind,
      run_id: runId,
      requester,
      tool: input.binding.tool,
      target: input.binding.target,
      content_sha256: input.binding.content_sha256,
      file_sha256: input.binding.file_sha256,
      file_size_bytes: input.binding.file_size_bytes,
      approval_id: approvalId,
      approver: decision!.approver,
      approved_via: decision!.via,
      key_sha256: sendKey || null,
      client_message_id: clientMessageId,
      source: input.source,
      result: o?.result ?? null,
      reconciled: o?.reconciled ?? false,
      message_ref: o?.message_ref ?? o?.file_ref ?? null,
      requested_at: new Date(requestedAt).toISOString(),
      approved_at: new Date(decision!.at).toISOString(),
      at: new Date(Date.now()).toISOString(),
    });
    const finish = (o: m.SendOutcome) => {
      outcome = o;
      setStatus('done');
    };
    const ready = await quick.isphereBridgeReady().catch(() => 'unavailable' as const);
    if (ready !== 'ready') return notNow(ready);
    try {
      await quick.isphereAuditAppend(entry('intent', null));
    } catch (err) {
      const conflict = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === 'IdempotencyConflict';
      return conflict
        ? { code: 'idempotency_conflict', message: 'This idempotency key was already used for another send of this tool in this run.', extra: {} }
        : { code: 'audit_unavailable', message: 'The audit record could not be written, so nothing was sent; try again.', extra: { retryable: true } };
    }
    events.emit('isphere.send_started', { approval_id: approvalId, client_message_id: clientMessageId });
    let o: m.SendOutcome;
    try {
      const attempts = proxyActivities<IsphereActivities>({
        // A file is read on the run's host (it lies in the run's folders there).
        ...(input.filePath && input.host ? { taskQueue: hostQueue(workflowInfo().taskQueue, input.host) } : {}),
        startToCloseTimeout: input.attemptMs,
        scheduleToCloseTimeout: input.reconcileMs,
        retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', nonRetryableErrorTypes: [] },
      });
      o =
        input.binding.tool === 'isphere_send_file'
          ? await attempts.isphereSendFile({
              runId,
              clientMessageId,
              target: input.binding.target,
              filePath: input.filePath!,
              fileSha256: input.binding.file_sha256!,
              fileSize: input.binding.file_size_bytes!,
              caption: input.words,
            })
          : await attempts.isphereSendMessage({ runId, clientMessageId, target: input.binding.target, words: input.words!, contentSha256: input.binding.content_sha256! });
    } catch {
      // Every attempt ended without an answer: one last look decides between sent, never sent, and unknown.
      const found = await quick.isphereLookupSend(clientMessageId).catch(() => undefined);
      o =
        found === undefined
          ? { result: 'unknown', message_ref: null, file_ref: null, reconciled: false, reason: 'the bridge could not say whether it took the send' }
          : found
            ? { result: 'sent', message_ref: found.message_ref, file_ref: found.file_ref, reconciled: true, reason: null }
            : { result: 'failed', message_ref: null, file_ref: null, reconciled: true, reason: 'the bridge never took the send' };
    }
    const written = await lasting.isphereAuditAppend(entry('outcome', o));
    auditSeq = written.seq;
    events.emit('isphere.send_finished', { approval_id: approvalId, result: o.result, reconciled: o.reconciled, audit_seq: written.seq });
    finish(o);
    return null;
  }
}

/** The bridge cannot take a send now; the approval is not used up. */
function notNow(ready: 'not_logged_in' | 'unavailable') {
  return ready === 'not_logged_in'
    ? { code: 'not_logged_in', message: 'No one is logged in to the iSphere client; a person must log in by hand. The approval stays good until its use-by time.', extra: {} }
    : { code: 'source_unavailable', message: 'The iSphere bridge cannot be reached. The approval stays good until its use-by time.', extra: { retryable: true } };
}
