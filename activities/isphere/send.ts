import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { DipperConfig } from '../../src/config';
import type { Text } from '../../workflows/content';
import type { ApprovalTarget, Binding, SendOutcome } from '../../workflows/isphere/messages';
import { sign } from '../../src/isphere/signature';
import { ANCHOR_EVENT, AuditKeyConflict, type AuditEntry, type AuditStore } from '../audit';
import { resolveTexts, type ContentStore } from '../contentStore';
import type { EventStore } from '../eventStore';
import { withFaults } from '../faults';
import { BridgeClient } from './bridgeClient';
import { ConnectorError, SendOutcomeUnknown } from './errors';

export interface IsphereActivityDeps {
  config: DipperConfig;
  audit: AuditStore;
  events: EventStore;
  content: ContentStore;
}

export interface NotifyInput {
  runId: string;
  approvalId: string;
  requester: { agent_id: string; role: string };
  binding: Binding;
  words: Text | null;
  decideBy: number;
}

export interface SendInput {
  runId: string;
  clientMessageId: string;
  target: ApprovalTarget;
  words: Text;
  contentSha256: string;
}

/** Refused before the request left: nothing was sent (a retry may succeed). */
const notSent = (message: string, retryable: boolean) => ApplicationFailure.create({ type: 'NotSent', message, nonRetryable: !retryable });

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
    async isphereAuditAppend(entry: AuditEntry): Promise<{ seq: number; hash: string }> {
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
        headers: { 'content-type': 'application/json', 'x-dipper-signature': sign(config.isphere.notify.secret, body), 'x-dipper-delivery': input.approvalId },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      // The receiver's words are not passed on: only that it did not take it.
      if (!res.ok) throw ApplicationFailure.create({ type: 'NotifyRefused', message: `the approval endpoint answered ${res.status}` });
      return 'sent';
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

