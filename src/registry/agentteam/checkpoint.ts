import { z } from 'zod';
import { agentteamTool, boardOf, channel, number } from './common';
import { checkpoint, checkpointOf } from './shapes';

export const taskCheckpoint = agentteamTool({
  name: 'task_checkpoint',
  title: 'Record a checkpoint',
  description:
    'Append one durable, high-signal checkpoint to a task (a milestone, a decision, a result). Checkpoints cannot be edited or removed; routine progress belongs in messages.',
  permission: 'agent_mutation',
  idempotency: 'none',
  concurrency: 'none',
  input: z.strictObject({
    channel,
    number,
    summary: z.string().trim().min(1).max(4000).describe('What was reached or decided (1-4000 characters).'),
  }),
  output: z.object({ checkpoint, task_updated_at: z.string() }),
  async handler({ channel: board, number: n, summary }, ctx) {
    const answer = await boardOf(ctx).mutate(ctx.caller, 'checkpoint', { channel: board, number: n, summary }, {
      tool: 'task_checkpoint',
      retrySafe: false,
      about: { channel: board, number: n },
    });
    return { checkpoint: checkpointOf((answer.checkpoint ?? {}) as Record<string, unknown>), task_updated_at: String(answer.taskUpdatedAt ?? '') };
  },
});
