import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { peersQuery } from '../../../workflows/run/messages';
import { NotFound } from '../../temporal';
import { ToolError } from '../../common/toolErrors';
import { agentId, beidouTool, checkBytes } from './common';

/** Your key for one message: the same key and words again are delivered once (docs/decisions.md, "send_message"). */
const idempotencyKey = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .refine((k) => Buffer.byteLength(k, 'utf8') <= 128, 'at most 128 UTF-8 bytes')
  .describe(
    'Your key for this message (at most 128 bytes; recommended whenever you may repeat the call). Repeating the call with the same key and content delivers nothing new and answers with the first message_id (reused: true); the same key with other content is refused.',
  );

/**
 * A keyed message's id: the same for every repeat of the call, so the recipient's inbox, which remembers the ids it
 * took, delivers it once. Scoped to the run, the sender and the recipient (task-tools-contract.md 7.2).
 */
export function keyedMessageId(runId: string, from: string, to: string, key: string): string {
  const hex = createHash('sha256').update(`send_message\n${runId}\n${from}\n${to}\n${key}`).digest('hex');
  // A UUID of version 8 (made by the application) and the RFC 9562 variant.
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const sendMessage = beidouTool({
  name: 'send_message',
  title: 'Send a message',
  description:
    "Send a message to another agent in this task; it lands in the recipient's inbox. A leader's message to a child with a pending review or termination request acknowledges it (rework). Fails with inbox_full when the recipient's inbox is at its cap. Give an idempotency_key when you may need to repeat the call (after outcome_unknown, say): the message is then delivered once.",
  permission: 'agent_mutation',
  // Without a key each call is a new message (its own message_id); with one, a repeat answers the first.
  idempotency: 'idempotency_key',
  concurrency: 'none',
  input: z.strictObject({
    to: agentId('Agent id of the recipient, in the same task.'),
    content: z.string().describe('Message body (at most 256 KiB).'),
    idempotency_key: idempotencyKey.optional(),
  }),
  output: z.object({
    delivered: z.literal(true),
    message_id: z.string(),
    reused: z.boolean().optional().describe('With an idempotency_key: true when this answers an earlier call with the same key, and nothing new was delivered.'),
  }),
  async handler({ to, content, idempotency_key: key }, ctx) {
    checkBytes('content', content, ctx.limits.maxContentBytes);
    const messageId = key === undefined ? randomUUID() : keyedMessageId(ctx.caller.runId, ctx.caller.agentId, to, key);
    const kept = await ctx.content.keep(ctx.caller.runId, content);
    const input = {
      message_id: messageId,
      from_agent_id: ctx.caller.agentId,
      from_run_id: ctx.caller.runId,
      content: kept,
      // 64 bits of the words' digest tell a reused key apart, at 16 characters of state per keyed message.
      ...(key === undefined ? {} : { fingerprint: createHash('sha256').update(content).digest('hex').slice(0, 16) }),
    };
    try {
      const outcome = await ctx.content.around([kept], () => ctx.delivery.deliver(ctx.caller.runId, to, input));
      if (!outcome.delivered) {
        await ctx.content.forget(kept);
        throw new ToolError(outcome.code, outcome.message, outcome.extra);
      }
      // A repeat's copy of long words is nobody's: the inbox holds the first.
      if (outcome.reused) await ctx.content.forget(kept);
      return { delivered: true as const, message_id: messageId, ...(key === undefined ? {} : { reused: outcome.reused === true }) };
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      const runOfRecipient = await ctx.team.runOfAgent(to);
      if (runOfRecipient && runOfRecipient !== ctx.caller.runId) {
        throw new ToolError('task_mismatch', `Agent "${to}" belongs to a different task.`, { field: 'to' });
      }
      if (runOfRecipient) {
        // Its workflow has closed: the run has ended.
        throw new ToolError('recipient_terminated', `Agent "${to}" has been terminated; its inbox is unreachable.`, { field: 'to' });
      }
      throw new ToolError('unknown_recipient', `No agent "${to}" in this task.`, { field: 'to' });
    }
  },
});

const peer = z.object({
  agent_id: z.string(),
  role: z.string(),
  team_id: z.string().nullable(),
  status: z.string(),
  is_leader_of: z.array(z.string()),
  name: z.string().nullable(),
});

export const listPeers = beidouTool({
  name: 'list_peers',
  title: 'List peers',
  description:
    'List agents of this task with their role, team, status and the teams they lead. scope: team (default) = your teammates and their leader; children = members of teams you lead; all = the whole task graph.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  input: z.strictObject({
    scope: z
      .enum(['team', 'children', 'all'])
      .optional()
      .describe('team (default): direct teammates; children: direct reports of teams you lead; all: entire task graph.'),
  }),
  output: z.object({ peers: z.array(peer) }),
  async handler({ scope }, ctx) {
    const peers = await ctx.team.query(ctx.team.run(ctx.caller.runId), peersQuery, {
      caller_id: ctx.caller.agentId,
      scope: scope ?? 'team',
    });
    return { peers };
  },
});
