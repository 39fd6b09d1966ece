import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { ConnectorError, type IsphereCode } from '../../common/isphere/errors';
import { keyHash } from '../../isphere/approvals';
import { runFileOp } from '../../isphere/fileOps';
import { resolveTarget, type Target, type TargetDetails, type TargetType } from '../../isphere/targets';
import type { Binding, SendOutcome } from '../../../workflows/isphere/messages';
import type { ToolContext } from '../types';
import { answer, isphereTool, text, type Call } from './common';
import { withEnvelope } from './envelope';

export const SEND_ERRORS = [
  'INVALID_ARGUMENT',
  'APPROVAL_REQUIRED',
  'PERMISSION_DENIED',
  'NOT_LOGGED_IN',
  'TARGET_NOT_FOUND',
  'AMBIGUOUS_TARGET',
  'DRY_RUN_ONLY',
  'TIMEOUT',
  'CONNECTOR_FAILED',
  'INTERNAL_ERROR',
  'SOURCE_UNAVAILABLE',
  'IDEMPOTENCY_CONFLICT',
] as const satisfies readonly IsphereCode[];

const sendSource = z
  .enum(['bridge', 'uia', 'network', 'auto'])
  .describe('Where to send: auto (default) uses the bridge; uia and network are declared but not available here.');

const targetType = z.enum(['contact', 'group', 'conversation']).describe('What target_id names.');
const targetId = z
  .string()
  .min(1)
  .max(200)
  .describe('The stable id (from isphere_search_contacts, isphere_search_groups or isphere_receive_messages), or a display name that matches exactly one target of target_type.');
const approvalId = z.string().min(1).max(200).describe('The approval a person gave for exactly this send; required when dry_run is false.');
const dryRun = z.boolean().describe('true (the default): plan only, nothing is sent.');
const idempotencyKey = z
  .string()
  .min(1)
  .max(128)
  .describe('Your key for this send (recommended): repeating the call with it never sends twice.');

const target = z.object({ target_type: z.enum(['contact', 'group', 'conversation']), target_id: z.string(), display_name: z.string().nullable() });
const approval = z
  .object({
    approval_id: z.string(),
    status: z.enum(['pending', 'approved', 'rejected', 'expired', 'cancelled', 'sending', 'done', 'used']),
    decide_by: z.string(),
    use_by: z.string().nullable(),
  })
  .describe('Dry run: the approval this send needs. A person decides it; you are told in your inbox, then send with its approval_id.');
const sendStatus = z.enum(['planned', 'sent', 'rejected']).describe('planned: a dry run; sent: delivered; rejected: iSphere refused it.');

export const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

interface SendInput {
  target_type: TargetType;
  target_id: string;
  approval_id?: string;
  dry_run?: boolean;
  source_preference?: string;
}

/**
 * A real send needs an approval. Without one the answer is that refusal
 * whatever else is wrong, but it comes after the target is resolved and
 * the content hashed, so its audit names what would have been sent and to
 * whom, like any real-write attempt's (issue 21). Null when the call may go on.
 */
function missingApproval(input: SendInput, dry: boolean): ConnectorError | null {
  if (dry || input.approval_id !== undefined) return null;
  return new ConnectorError('APPROVAL_REQUIRED', 'A real send needs approval_id. Call with dry_run true (the default) to plan it and request an approval.', false, {
    field: 'approval_id',
    approval_status: 'missing',
  });
}

/** A step of a send that lacks its approval: whatever the step finds wrong, the answer is the missing approval. */
async function orRefusal<T>(refusal: ConnectorError | null, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw refusal ?? err;
  }
}

/** The target, resolved on the source the send would use (never local_readonly: a local export cannot send). */
async function targetOf(call: Call, input: SendInput): Promise<{ target: Target; details: TargetDetails }> {
  const who = await call.reader();
  const got = await call.service.sources.read((input.source_preference ?? 'auto') as 'auto', 'resolve_targets', (c) =>
    resolveTarget(c, input.target_type, input.target_id.normalize('NFC').trim(), who, call.service.policy),
  );
  call.trail.note({ source: got.source, fallbacks: got.fallbacks, target_ref: got.value.target.target_id });
  return got.value;
}

/** The deployment allows dry runs only (DIPPER_ISPHERE_SENDS=dry_run_only): nothing is sent and the plan stands. */
function sendsNotEnabled(): ConnectorError {
  return new ConnectorError('DRY_RUN_ONLY', 'Real sends are not enabled on this deployment; nothing was sent. Dry runs plan a send.', false, { reason: 'sends_not_enabled' });
}

/** A send that ended without a delivery, as a refusal naming what happened (the audit records it). */
function notDelivered(o: SendOutcome): ConnectorError {
  if (o.result === 'blocked') return new ConnectorError('APPROVAL_REQUIRED', `Nothing was sent: ${o.reason ?? 'what would be sent differs from what was approved'}.`, false, { approval_status: 'mismatch', result: o.result });
  if (o.result === 'failed') return new ConnectorError('CONNECTOR_FAILED', `The send failed and was not delivered (${o.reason ?? 'the bridge did not take it'}); a new dry run asks for a new approval.`, false, { result: o.result });
  return new ConnectorError('CONNECTOR_FAILED', 'Whether the send was delivered is unknown; it is recorded so, and it will not be sent again under this approval.', false, { result: o.result });
}

function start(ctx: ToolContext, tool: string, input: SendInput, dry: boolean) {
  return { tool, ctx, dry, approvalId: input.approval_id ?? null };
}

export const sendMessage = isphereTool({
  name: 'isphere_send_message',
  title: 'Send an iSphere message',
  description:
    'Send text to one contact, group or conversation. dry_run (the default) resolves the target and plans the send; a real send needs approval_id from a person, given for exactly this target and text, and happens once however often it is repeated.',
  permission: 'agent_mutation',
  idempotency: 'idempotency_key',
  concurrency: 'owner_serialized',
  errorCodes: SEND_ERRORS,
  input: z.strictObject({
    target_type: targetType,
    target_id: targetId,
    content_text: text(20_000, 'The message text, 1-20,000 characters.'),
    approval_id: approvalId.optional(),
    dry_run: dryRun.optional(),
    idempotency_key: idempotencyKey.optional(),
    source_preference: sendSource.optional(),
  }),
  output: withEnvelope({
    dry_run: z.boolean(),
    send_status: sendStatus,
    target,
    message_ref: z.string().nullable().describe('The sent message; null until sent.'),
    content_sha256: z.string().describe('sha256 (hex) of content_text as UTF-8: what an approval is bound to.'),
    approval: approval.optional(),
  }),
  async handler(input, ctx) {
    const s = start(ctx, 'isphere_send_message', input, input.dry_run ?? true);
    return answer(s.tool, ctx, s.dry, async (call) => {
      call.trail.note({ approval_id: s.approvalId });
      const refusal = missingApproval(input, s.dry);
      const contentSha = sha256Hex(input.content_text);
      call.trail.note({ content_sha256: contentSha });
      const { target: resolved, details } = await orRefusal(refusal, () => targetOf(call, input));
      if (refusal) throw refusal;
      const binding: Binding = { tool: 'isphere_send_message', target: resolved, content_sha256: contentSha, file_sha256: null, file_size_bytes: null, key_sha256: keyHash(input.idempotency_key) };
      const { runId, agentId } = ctx.caller;
      if (s.dry) {
        const { role } = await call.service.identity(ctx.caller);
        const words = await ctx.content.keep(runId, input.content_text);
        const planned = await call.service.approvals.plan(runId, { agent_id: agentId, role }, binding, words, { targetDetails: details });
        call.trail.note({ approval_id: planned.approval_id });
        return { dry_run: true, send_status: 'planned' as const, target: resolved, message_ref: null, content_sha256: contentSha, approval: planned };
      }
      if (call.service.sends === 'dry_run_only') throw sendsNotEnabled();
      const sent = await call.service.approvals.send(runId, input.approval_id!, agentId, binding);
      call.trail.note({ operator_id: sent.approver, replayed: sent.replayed });
      if (sent.result !== 'sent' && sent.result !== 'rejected') throw notDelivered(sent);
      return { dry_run: false, send_status: sent.result, target: resolved, message_ref: sent.message_ref, content_sha256: contentSha };
    });
  },
});

export const sendFile = isphereTool({
  name: 'isphere_send_file',
  title: 'Send an iSphere file',
  description:
    'Send a local file to one contact, group or conversation. file_path must lie under an outbound directory the operator approved (your run\'s workspace has isphere/outbound). dry_run (the default) resolves the target, hashes the file and asks a person for approval; a real send needs approval_id, given for exactly this target and file, and the file unchanged since.',
  permission: 'agent_mutation',
  idempotency: 'idempotency_key',
  concurrency: 'owner_serialized',
  errorCodes: SEND_ERRORS,
  input: z.strictObject({
    target_type: targetType,
    target_id: targetId,
    file_path: z.string().min(1).max(4096).describe('Absolute path of the file, under an approved outbound directory.'),
    caption: z.string().max(2000).describe('Text sent with the file, up to 2,000 characters.').optional(),
    approval_id: approvalId.optional(),
    dry_run: dryRun.optional(),
    idempotency_key: idempotencyKey.optional(),
    source_preference: sendSource.optional(),
  }),
  output: withEnvelope({
    dry_run: z.boolean(),
    send_status: sendStatus,
    target,
    file_ref: z.string().nullable().describe('The sent file; null until sent.'),
    file_sha256: z.string().describe('sha256 (hex) of the file: what an approval is bound to.'),
    file_size_bytes: z.number().int(),
    approval: approval.optional(),
  }),
  async handler(input, ctx) {
    const s = start(ctx, 'isphere_send_file', input, input.dry_run ?? true);
    return answer(s.tool, ctx, s.dry, async (call) => {
      call.trail.note({ approval_id: s.approvalId });
      const refusal = missingApproval(input, s.dry);
      const file = input.file_path;
      if (file.includes('\0') || !path.isAbsolute(file) || file.split(/[\\/]/).includes('..')) {
        throw refusal ?? new ConnectorError('INVALID_ARGUMENT', 'file_path must be an absolute path without "..".', false, { field: 'file_path' });
      }
      const captionSha = input.caption ? sha256Hex(input.caption) : null;
      call.trail.note({ content_sha256: captionSha });
      const { target: resolved, details } = await orRefusal(refusal, () => targetOf(call, input));
      const { runId, agentId } = ctx.caller;
      const { role, host } = await orRefusal(refusal, () => call.service.identity(ctx.caller));
      // Hashed on the run's host, where the file is: confined to an approved outbound directory, never through a symlink.
      const { inspected } = await orRefusal(refusal, () =>
        runFileOp(ctx.team, call.service.files.taskQueue, ctx.caller, { op: 'inspect', runId, filePath: file, ...(host ? { host } : {}) }, 'file_path', call.service.files.waitMs),
      );
      call.trail.note({ file_sha256: inspected!.sha256 });
      if (refusal) throw refusal;
      const binding: Binding = {
        tool: 'isphere_send_file',
        target: resolved,
        content_sha256: captionSha,
        file_sha256: inspected!.sha256,
        file_size_bytes: inspected!.size_bytes,
        key_sha256: keyHash(input.idempotency_key),
      };
      const facts = { target: resolved, file_sha256: inspected!.sha256, file_size_bytes: inspected!.size_bytes };
      if (s.dry) {
        const words = input.caption ? await ctx.content.keep(runId, input.caption) : null;
        const planned = await call.service.approvals.plan(runId, { agent_id: agentId, role }, binding, words, { filePath: inspected!.real_path, ...(host ? { host } : {}), targetDetails: details });
        call.trail.note({ approval_id: planned.approval_id });
        return { dry_run: true, send_status: 'planned' as const, ...facts, file_ref: null, approval: planned };
      }
      if (call.service.sends === 'dry_run_only') throw sendsNotEnabled();
      const sent = await call.service.approvals.send(runId, input.approval_id!, agentId, binding);
      call.trail.note({ operator_id: sent.approver, replayed: sent.replayed });
      if (sent.result !== 'sent' && sent.result !== 'rejected') throw notDelivered(sent);
      return { dry_run: false, send_status: sent.result, ...facts, file_ref: sent.file_ref };
    });
  },
});
