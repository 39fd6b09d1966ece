import type { TargetDetails } from './targets';
import { createHash } from 'node:crypto';
import { ConnectorError } from '../common/isphere/errors';
import { canonicalJson } from '../common/canonicalJson';
import type { Text } from '../common/pure/content';
import { approvalWorkflowId } from '../../workflows/ids';
import { approvalQuery, requestSendUpdate, type ApprovalInput, type ApprovalView, type Binding, type SendOutcome } from '../../workflows/isphere/messages';
import { agentIdKey, runIdKey, statusKey } from '../../workflows/searchAttributes';
import { isphereApprovalWorkflow } from '../../workflows/isphere/approval';
import type { IsphereConfig } from '../config';
import { isNotFound, isphereRefusal, typeIs, type Temporal, type WorkflowRef } from '../temporal';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** sha256 of an idempotency key, trimmed: the key itself never leaves the gateway. */
export const keyHash = (key: string | undefined): string | null => (key === undefined ? null : sha256(key.trim()));

/** The approval a dry run asks for: the same request (run, agent, tool, target, content, key) always names the same one. */
export function approvalIdOf(runId: string, agentId: string, binding: Binding): string {
  const digest = createHash('sha256')
    .update(canonicalJson([runId, agentId, binding.tool, binding.target.target_type, binding.target.target_id, binding.content_sha256, binding.file_sha256, binding.key_sha256 ?? '']))
    .digest('base64url');
  return `apr_${digest.slice(0, 26)}`;
}

const unknownApproval = (id: string) =>
  new ConnectorError('APPROVAL_REQUIRED', `No approval ${id} for this run: a dry run asks for one.`, false, { field: 'approval_id', approval_status: 'unknown' });

export interface Planned {
  approval_id: string;
  status: ApprovalView['status'] | 'used';
  decide_by: string;
  use_by: string | null;
}

/**
 * The gateway's side of approval-gated sends: a dry run starts (or finds)
 * the approval workflow; a real send asks it to send and waits for the
 * outcome within the call; an operator's decision goes to it as an Update.
 */
export class Approvals {
  constructor(
    private readonly temporal: Temporal,
    private readonly taskQueue: string,
    private readonly config: IsphereConfig,
    /** How long a send call waits for the outcome before answering TIMEOUT (retry attaches to the same send). */
    private readonly sendWaitMs: number,
    /** The keys a decision on a new approval must be signed with (src/auth/decisionKeys.ts). */
    private readonly decisionKeys: readonly string[],
  ) {}

  handle(runId: string, approvalId: string): WorkflowRef<typeof isphereApprovalWorkflow> {
    return this.temporal.handle(approvalWorkflowId(runId, approvalId));
  }

  /** Starts the approval of this request, or answers the one already open; one whose send was made is `used`. */
  async plan(runId: string, requester: { agent_id: string; role: string }, binding: Binding, words: Text | null, more: { filePath?: string; host?: string; targetDetails?: TargetDetails } = {}): Promise<Planned> {
    const approvalId = approvalIdOf(runId, requester.agent_id, binding);
    const handle = this.handle(runId, approvalId);
    const before = await handle.describe().catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    // Open: this request's own approval answers as it stands (a start would only attach to it).
    if (before?.status.name === 'RUNNING') return planned(approvalId, await this.view(runId, approvalId));
    if (before) {
      const ended = (await handle.result().catch(() => undefined)) as ApprovalView | undefined;
      if (ended?.status === 'done') return { ...planned(approvalId, ended), status: 'used' };
    }
    // A new approval counts against the run's cap.
    const count = await this.temporal.count(`${typeIs(isphereApprovalWorkflow)} AND ExecutionStatus = 'Running' AND DipperRunId = '${runId}'`);
    if (count >= this.config.maxOpenApprovals) {
      throw new ConnectorError('PERMISSION_DENIED', `This run has ${count} approvals waiting or unused, its limit; wait for people to decide them before asking for more.`, false, {
        reason: 'approval_quota',
        limit: this.config.maxOpenApprovals,
      });
    }
    const input: ApprovalInput = {
      runId,
      approvalId,
      requester,
      binding,
      words,
      source: 'bridge',
      decisionMs: this.config.approvalSeconds * 1000,
      useMs: this.config.useSeconds * 1000,
      receiptMs: this.config.receiptSeconds * 1000,
      reconcileMs: this.config.reconcileSeconds * 1000,
      // Two bridge requests, the wait after a lost answer (at most 5 s), and room.
      attemptMs: 2 * this.config.bridgeTimeoutMs + Math.min(this.config.bridgeTimeoutMs, 5000) + 5000,
      notify: this.config.notify !== undefined,
      decisionKeys: [...this.decisionKeys],
      ...more,
    };
    await this.temporal.start(isphereApprovalWorkflow, {
      workflowId: handle.workflowId,
      taskQueue: this.taskQueue,
      args: [input],
      // Open: the same request attaches to it. Closed without a send (rejected, expired, cancelled): asked anew.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      staticSummary: `${binding.tool} to ${binding.target.display_name ?? binding.target.target_id} asked by ${requester.role}`,
      staticDetails: `Target: ${binding.target.target_type} ${binding.target.target_id}  \n${binding.content_sha256 ? `content_sha256 ${binding.content_sha256}` : `file_sha256 ${binding.file_sha256}`}`,
      typedSearchAttributes: [
        { key: runIdKey, value: runId },
        { key: agentIdKey, value: requester.agent_id },
        { key: statusKey, value: 'pending' },
      ],
    });
    return planned(approvalId, await this.view(runId, approvalId));
  }

  async view(runId: string, approvalId: string): Promise<ApprovalView> {
    try {
      return await this.handle(runId, approvalId).query(approvalQuery);
    } catch (err) {
      if (isNotFound(err)) throw unknownApproval(approvalId);
      throw err;
    }
  }

  /**
   * The real send under an approval: one Update per send attempt (its id
   * from the approval, the key and the hashes), so concurrent duplicates
   * attach to one send. Past the wait, TIMEOUT: the send goes on, and the
   * same call again gets its outcome.
   */
  async send(runId: string, approvalId: string, requester: string, binding: Binding): Promise<SendOutcome & { replayed: boolean; approver: string }> {
    if (!/^apr_[A-Za-z0-9_-]{1,64}$/.test(approvalId)) throw unknownApproval(approvalId);
    const handle = this.handle(runId, approvalId);
    const described = await handle.describe().catch((err: unknown) => {
      if (isNotFound(err)) throw unknownApproval(approvalId);
      throw err;
    });
    // Closed: its final record answers (a send it made is answered again, never made again).
    if (described.status.name !== 'RUNNING') return closedAnswer(approvalId, (await handle.result()) as ApprovalView, requester, binding);
    let timer: NodeJS.Timeout | undefined;
    try {
      const view = await this.view(runId, approvalId);
      // The send was made, or is being made, before this call: its answer is a repeat's.
      const repeat = view.status === 'done' || view.status === 'sending';
      const updateId = `send-${view.attempt}-${sha256(canonicalJson([requester, binding]))}`;
      const update = await handle.startUpdate(requestSendUpdate, [{ requester, binding }], updateId);
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ConnectorError('TIMEOUT', 'The send is still in progress. Repeat this exact call to get its outcome; it will not be sent twice.', true, { reason: 'send_in_progress' })),
          this.sendWaitMs,
        );
      });
      const outcome = await Promise.race([update.result(), late]);
      return { ...outcome, replayed: outcome.replayed || repeat };
    } catch (err) {
      if (err instanceof ConnectorError && err.details.approval_status !== 'unknown') throw err;
      // It closed between the look and the send (a rejection or an expiry lands then): its final record answers.
      if (isNotFound(err) || err instanceof ConnectorError || /already completed/i.test(String((err as Error).message))) {
        const ended = (await handle.result().catch(() => undefined)) as ApprovalView | undefined;
        if (ended) return closedAnswer(approvalId, ended, requester, binding);
        throw unknownApproval(approvalId);
      }
      throw isphereRefusal(err) ?? err;
    } finally {
      clearTimeout(timer);
    }
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

const planned = (approvalId: string, view: ApprovalView): Planned => ({
  approval_id: approvalId,
  status: view.status,
  decide_by: iso(view.decide_by),
  use_by: view.use_by === null ? null : iso(view.use_by),
});

/** The answer of an approval whose workflow has closed, from its final record. */
function closedAnswer(approvalId: string, view: ApprovalView, requester: string, binding: Binding): SendOutcome & { replayed: boolean; approver: string } {
  const refused = (status: string, message: string) => new ConnectorError('APPROVAL_REQUIRED', message, false, { approval_status: status });
  if (view.requester.agent_id !== requester) throw refused('mismatch', `Approval ${approvalId} was given to another agent.`);
  if (view.status !== 'done' || !view.outcome) throw refused(view.status === 'approved' || view.status === 'pending' ? 'expired' : view.status, `Approval ${approvalId} is ${view.status}.`);
  const same = canonicalJson({ ...view.binding, key_sha256: null }) === canonicalJson({ ...binding, key_sha256: null });
  if (!same) throw refused('mismatch', `Approval ${approvalId} was given for another target, text or file.`);
  if ((view.binding.key_sha256 ?? '') !== (binding.key_sha256 ?? '')) throw refused('used', `Approval ${approvalId} was already used.`);
  return { ...view.outcome, replayed: true, approver: view.decision?.approver ?? '' };
}

export { sha256 as sha256Hex };
