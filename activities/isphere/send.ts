import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { DipperConfig } from '../../src/config';
import type { Text } from '../../src/common/pure/content';
import type { ApprovalTarget, Binding, SendOutcome } from '../../workflows/isphere/messages';
import { proven, type DecisionClaim, type DecisionProof } from '../../src/common/pure/decisionProof';
import { pathOf, sign } from '../../src/common/isphere/signature';
import { ANCHOR_EVENT, AuditKeyConflict, type AuditEntry, type AuditStore } from '../../src/common/stores/audit';
import { resolveTexts, type ContentStore } from '../../src/common/stores/contentStore';
import type { EventStore } from '../../src/common/stores/eventStore';
import { withFaults } from '../faults';
import { approvedRoots, confinedDir, openConfined, refuseFile, writeDownload, type Inspected } from './files';
import { BridgeClient } from '../../src/common/isphere/bridgeClient';
import { ConnectorError, SendOutcomeUnknown } from '../../src/common/isphere/errors';

export interface IsphereActivityDeps {
  config: DipperConfig;
  audit: AuditStore;
  events: EventStore;
  content: ContentStore;
  /** The public keys (hex) whose signature makes a decision a person's: this worker's own, not the workflow's. */
  decisionKeys: readonly string[];
}

/** A person's decision and the gateway's signature over it, handed to every step that acts on it. */
export type ProvenDecision = { claim: DecisionClaim; proof: DecisionProof } | undefined;

export interface NotifyInput {
  runId: string;
  approvalId: string;
  requester: { agent_id: string; role: string };
  binding: Binding;
  words: Text | null;
  decideBy: number;
}

export interface FileSendInput {
  runId: string;
  /** Checked again before anything leaves (src/common/pure/decisionProof.ts). */
  decision?: ProvenDecision;
  clientMessageId: string;
  target: ApprovalTarget;
  filePath: string;
  fileSha256: string;
  fileSize: number;
  /** The approved caption (a reference when long), or null. */
  caption: Text | null;
}

export interface DownloadInput {
  runId: string;
  dir: string;
  files: { file_id: string; saved_name: string; sha256: string | null }[];
}

export interface SendInput {
  runId: string;
  /** Checked again before anything leaves (src/common/pure/decisionProof.ts). */
  decision?: ProvenDecision;
  clientMessageId: string;
  target: ApprovalTarget;
  words: Text;
  contentSha256: string;
}

/** Refused before the request left: nothing was sent (a retry may succeed). */
const notSent = (message: string, retryable: boolean) => ApplicationFailure.create({ type: 'NotSent', message, nonRetryable: !retryable });

/** The approval a send's client message id (`dip-<approval id>`) belongs to. */
const approvalOf = (clientMessageId: string) => clientMessageId.replace(/^dip-/, '');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The I/O of an approved iSphere send: the bridge's session check, the
 * audit chain (with its anchors in the event log), and the send itself,
 * which never sends blindly: each attempt first asks the bridge whether
 * this approval's client message id was already accepted.
 */
export function createIsphereActivities(deps: IsphereActivityDeps) {
  const { config } = deps;
  const bridge = () => {
    if (!config.isphere.bridgeUrl) throw notSent('no iSphere bridge is configured', false);
    return new BridgeClient({ baseUrl: config.isphere.bridgeUrl, token: config.isphere.bridgeToken ?? '', timeoutMs: config.isphere.bridgeTimeoutMs });
  };

  /** Before anything is recorded or sent: the decision must be one the gateway vouched for, by this worker's keys. */
  const mustBeProven = (d: ProvenDecision, of: { runId: string; approvalId: string; contentSha256?: string | null; fileSha256?: string | null }) => {
    const c = d?.claim;
    const same = (claimed: string | null, given: string | null | undefined) => given === undefined || claimed === given;
    const matches = c && c.decision === 'approve' && c.run_id === of.runId && c.subject_id === of.approvalId && same(c.content_sha256, of.contentSha256) && same(c.file_sha256, of.fileSha256);
    if (matches && proven(c, d.proof, deps.decisionKeys)) return;
    throw ApplicationFailure.create({ type: 'DecisionUnproven', message: 'the approval was not decided by a person through the gateway', nonRetryable: true });
  };

  return withFaults(config.faults, {
    /** Whether a send can start now: a bridge with a person logged in. */
    async isphereBridgeReady(): Promise<'ready' | 'not_logged_in' | 'unavailable'> {
      if (!config.isphere.bridgeUrl) return 'unavailable';
      try {
        return (await bridge().status()).logged_in ? 'ready' : 'not_logged_in';
      } catch {
        return 'unavailable';
      }
    },

    /** Appends a record to the chain and anchors it in the event log; a key used with another approval is refused for good. */
    async isphereAuditAppend(entry: AuditEntry, decision?: ProvenDecision): Promise<{ seq: number; hash: string }> {
      if (entry.kind === 'intent') mustBeProven(decision, { runId: entry.run_id, approvalId: entry.approval_id, contentSha256: entry.content_sha256, fileSha256: entry.file_sha256 });
      let row;
      try {
        row = await deps.audit.append(entry);
      } catch (err) {
        if (err instanceof AuditKeyConflict) throw ApplicationFailure.create({ type: 'IdempotencyConflict', message: err.message, nonRetryable: true });
        throw err;
      }
      await deps.events.append([
        { event_id: `anchor-${entry.record_id}`, run_id: entry.run_id, agent_id: entry.requester, type: ANCHOR_EVENT, ts: Date.now(), data: { seq: row.seq, hash: row.hash, record_id: entry.record_id } },
      ]);
      return { seq: row.seq, hash: row.hash };
    },

    /**
     * Announces a new approval request to the configured approval system
     * (signed like the webhook it answers through). A failure is retried by
     * the caller until the approval's decision time; it never blocks it.
     */
    async isphereNotify(input: NotifyInput): Promise<'sent' | 'not_configured'> {
      if (!config.isphere.notify) return 'not_configured';
      const words = input.words === null ? null : await resolveTexts(deps.content, input.words);
      const body = JSON.stringify({
        approval_id: input.approvalId,
        run_id: input.runId,
        tool: input.binding.tool,
        requester: input.requester,
        target: input.binding.target,
        content_sha256: input.binding.content_sha256,
        file: input.binding.file_sha256 ? { sha256: input.binding.file_sha256, size_bytes: input.binding.file_size_bytes } : null,
        preview: typeof words === 'string' ? Array.from(words).slice(0, 200).join('') : null,
        decide_by: new Date(input.decideBy).toISOString(),
        console_url: `${config.publicUrl}/console#/approvals`,
        decision_url: `${config.publicUrl}/hooks/isphere/approvals/${input.runId}/${input.approvalId}/decision`,
      });
      const res = await fetch(config.isphere.notify.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-dipper-signature': sign(config.isphere.notify.secret, { method: 'POST', path: pathOf(config.isphere.notify.url), body }), 'x-dipper-delivery': input.approvalId },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      // The receiver's words are not passed on: only that it did not take it.
      if (!res.ok) throw ApplicationFailure.create({ type: 'NotifyRefused', message: `the approval endpoint answered ${res.status}` });
      return 'sent';
    },

    /** A file to send, on the run's host: confined, opened without following a symlink, hashed. */
    async isphereInspectFile(input: { runId: string; filePath: string }): Promise<Inspected> {
      return (await openConfined(input.filePath, approvedRoots(config, input.runId, 'outbound'), config.isphere.maxFileBytes)).info;
    },

    /** Downloads files into a confined directory on the run's host; each file's bytes must match the sha256 the source gave. */
    async isphereDownload(input: DownloadInput): Promise<{ file_id: string; saved_path: string; size_bytes: number; sha256: string }[]> {
      const dir = await confinedDir(input.dir, approvedRoots(config, input.runId, 'downloads'));
      const client = bridge();
      const saved = [];
      for (const f of input.files) {
        let got: { bytes: Buffer; sha256: string | null };
        try {
          got = await client.fileContent(f.file_id, config.isphere.maxFileBytes);
        } catch (err) {
          if (err instanceof ConnectorError && err.code === 'PERMISSION_DENIED') throw refuseFile('too_large', err.message);
          throw err;
        }
        const sha = createHash('sha256').update(got.bytes).digest('hex');
        // A transfer that does not match what the bridge says it sent is not kept (retried as a new attempt).
        if ((got.sha256 !== null && got.sha256 !== sha) || (f.sha256 !== null && f.sha256 !== sha)) throw new Error(`the bytes of ${f.file_id} do not match their sha256`);
        saved.push({ file_id: f.file_id, ...(await writeDownload(dir, f.saved_name, got.bytes)) });
      }
      return saved;
    },

    /** One attempt at a file send, as isphereSendMessage: a lookup first, the file hashed again just before sending. */
    async isphereSendFile(input: FileSendInput): Promise<SendOutcome> {
      mustBeProven(input.decision, { runId: input.runId, approvalId: approvalOf(input.clientMessageId), fileSha256: input.fileSha256 });
      const client = bridge();
      const earlier = await lookup(client, input.clientMessageId);
      if (earlier) return { result: 'sent', message_ref: null, file_ref: earlier.file_ref ?? null, reconciled: true, reason: null };
      let opened;
      try {
        opened = await openConfined(input.filePath, approvedRoots(config, input.runId, 'outbound'), config.isphere.maxFileBytes);
      } catch (err) {
        return { result: 'blocked', message_ref: null, file_ref: null, reconciled: false, reason: err instanceof Error ? err.message : 'the file cannot be read' };
      }
      if (opened.info.sha256 !== input.fileSha256 || opened.info.size_bytes !== input.fileSize) {
        return { result: 'blocked', message_ref: null, file_ref: null, reconciled: false, reason: 'the file changed since it was approved' };
      }
      const caption = input.caption === null ? null : await resolveTexts(deps.content, input.caption);
      if (caption !== null && typeof caption !== 'string') return { result: 'blocked', message_ref: null, file_ref: null, reconciled: false, reason: 'the approved caption is no longer kept' };
      try {
        const receipt = await client.sendFile({
          client_message_id: input.clientMessageId,
          target_type: input.target.target_type,
          target_id: input.target.target_id,
          file_name: opened.info.file_name,
          content_base64: opened.bytes.toString('base64'),
          ...(caption ? { caption } : {}),
        });
        return { result: 'sent', message_ref: null, file_ref: receipt.file_ref ?? null, reconciled: receipt.duplicate === true, reason: null };
      } catch (err) {
        if (err instanceof SendOutcomeUnknown) {
          await sleep(Math.min(config.isphere.bridgeTimeoutMs, 5000));
          const after = await lookup(client, input.clientMessageId);
          if (after) return { result: 'sent', message_ref: null, file_ref: after.file_ref ?? null, reconciled: true, reason: null };
          throw ApplicationFailure.create({ type: 'OutcomeUnknown', message: 'the bridge gave no answer and has no record of the send yet' });
        }
        if (err instanceof ConnectorError) {
          if (err.code === 'TARGET_NOT_FOUND' || err.code === 'INVALID_ARGUMENT') return { result: 'rejected', message_ref: null, file_ref: null, reconciled: false, reason: err.message };
          throw notSent(err.message, err.retryable || err.code === 'NOT_LOGGED_IN');
        }
        throw err;
      }
    },

    /** What the bridge accepted under this id, for reconciling after every other attempt has ended. */
    async isphereLookupSend(clientMessageId: string): Promise<{ message_ref: string | null; file_ref: string | null } | null> {
      const found = await bridge().lookupSend(clientMessageId);
      return found ? { message_ref: found.message_ref ?? null, file_ref: found.file_ref ?? null } : null;
    },

    /**
     * One attempt at the send. The words are hashed again and must be what
     * was approved. A lost answer is looked up (after a bridge timeout) and
     * never re-sent on its own: an attempt that cannot tell fails, and the
     * next attempt begins with the same lookup.
     */
    async isphereSendMessage(input: SendInput): Promise<SendOutcome> {
      mustBeProven(input.decision, { runId: input.runId, approvalId: approvalOf(input.clientMessageId), contentSha256: input.contentSha256, fileSha256: null });
      const client = bridge();
      const earlier = await lookup(client, input.clientMessageId);
      if (earlier) return { result: 'sent', message_ref: earlier.message_ref ?? null, file_ref: null, reconciled: true, reason: null };
      const words = await resolveTexts(deps.content, input.words);
      if (typeof words !== 'string') return { result: 'blocked', message_ref: null, file_ref: null, reconciled: false, reason: 'the approved words are no longer kept' };
      if (sha256(words) !== input.contentSha256) return { result: 'blocked', message_ref: null, file_ref: null, reconciled: false, reason: 'the words differ from what was approved' };
      try {
        const receipt = await client.sendMessage({ client_message_id: input.clientMessageId, target_type: input.target.target_type, target_id: input.target.target_id, content_text: words });
        return { result: 'sent', message_ref: receipt.message_ref ?? null, file_ref: null, reconciled: receipt.duplicate === true, reason: null };
      } catch (err) {
        if (err instanceof SendOutcomeUnknown) {
          // The bridge may still be handling it: give it one timeout before asking.
          await sleep(Math.min(config.isphere.bridgeTimeoutMs, 5000));
          const after = await lookup(client, input.clientMessageId);
          if (after) return { result: 'sent', message_ref: after.message_ref ?? null, file_ref: null, reconciled: true, reason: null };
          throw ApplicationFailure.create({ type: 'OutcomeUnknown', message: 'the bridge gave no answer and has no record of the send yet' });
        }
        if (err instanceof ConnectorError) {
          // iSphere refused it for good: the target cannot receive, or the request is one it will not take.
          if (err.code === 'TARGET_NOT_FOUND' || err.code === 'INVALID_ARGUMENT') {
            return { result: 'rejected', message_ref: null, file_ref: null, reconciled: false, reason: err.message };
          }
          throw notSent(err.message, err.retryable || err.code === 'NOT_LOGGED_IN');
        }
        throw err;
      }
    },
  });
}

/** A lookup that cannot reach the bridge fails the attempt: nothing may be sent without knowing. */
async function lookup(client: BridgeClient, id: string) {
  try {
    return await client.lookupSend(id);
  } catch (err) {
    throw ApplicationFailure.create({ type: 'LookupFailed', message: err instanceof Error ? err.message : 'lookup failed' });
  }
}

export type IsphereActivities = ReturnType<typeof createIsphereActivities>;

