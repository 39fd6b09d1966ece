import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { peersQuery } from '../../../workflows/run/messages';
import { NotFound } from '../../temporal';
import { ToolError } from '../errors';
import { agentId, beidouTool, checkBytes } from './common';

export const sendMessage = beidouTool({
  name: 'send_message',
  title: 'Send a message',
  description:
    "Send a message to another agent in this task; it lands in the recipient's inbox. A leader's message to a child with a pending review or termination request acknowledges it (rework). Fails with inbox_full when the recipient's inbox is at its cap.",
  permission: 'agent_mutation',
  // Each call is a new message (its own message_id) appended to the recipient's inbox.
  idempotency: 'none',
  concurrency: 'none',
  input: z.strictObject({
    to: agentId('Agent id of the recipient, in the same task.'),
    content: z.string().describe('Message body (at most 256 KiB).'),
  }),
  output: z.object({ delivered: z.literal(true), message_id: z.string() }),
  async handler({ to, content }, ctx) {
    checkBytes('content', content, ctx.limits.maxContentBytes);
    const messageId = randomUUID();
    const kept = await ctx.content.keep(ctx.caller.runId, content);
    const input = {
      message_id: messageId,
      from_agent_id: ctx.caller.agentId,
      from_run_id: ctx.caller.runId,
      content: kept,
    };
    try {
      const outcome = await ctx.content.around([kept], () => ctx.delivery.deliver(ctx.caller.runId, to, input));
      if (!outcome.delivered) {
        await ctx.content.forget(kept);
        throw new ToolError(outcome.code, outcome.message, outcome.extra);
      }
      return { delivered: true as const, message_id: messageId };
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
