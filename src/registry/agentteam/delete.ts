import { z } from 'zod';
import { agentteamTool, boardOf, channel, defined, number } from './common';

export const taskDelete = agentteamTool({
  name: 'task_delete',
  title: 'Delete a task',
  description:
    'Permanently delete a task you created; it cannot be restored. A task with subtasks needs subtask_mode: promote keeps them as top-level tasks, delete removes them too (only if you created every one of them).',
  permission: 'destructive',
  idempotency: 'none',
  concurrency: 'none',
  input: z.strictObject({
    channel,
    number,
    subtask_mode: z
      .enum(['promote', 'delete'])
      .describe('Only for a task with subtasks: promote (they become top-level) or delete (they are deleted with it). Not needed otherwise.')
      .optional(),
  }),
  output: z.object({
    deleted: z.array(z.number().int()).describe('Task numbers deleted.'),
    promoted: z.array(z.number().int()).describe('Subtask numbers that became top-level.'),
  }),
  async handler({ channel: board, number: n, subtask_mode }, ctx) {
    const body = defined({ channel: board, number: n, subtaskMode: subtask_mode });
    const answer = await boardOf(ctx).mutate(ctx.caller, 'delete', body, { tool: 'task_delete', retrySafe: false, about: { channel: board, number: n } });
    const nums = (v: unknown) => (Array.isArray(v) ? v.map(Number) : []);
    return { deleted: nums(answer.deleted), promoted: nums(answer.promoted) };
  },
});
