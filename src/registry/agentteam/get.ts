import { z } from 'zod';
import { bytesOf, cutTexts, itemsThatFit } from '../budget';
import { agentteamTool, boardOf, channel, number } from './common';
import { checkpoint, checkpointOf, detailOf, summaryOf, taskDetail, taskSummary, truncation } from './shapes';

const list = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);

export const taskGet = agentteamTool({
  name: 'task_get',
  title: 'Get a task',
  description:
    "One task's detail: its fields, its first 20 subtasks and its last 10 checkpoints, with their counts. Attachments are metadata only. Use task_list to find a task's number.",
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  input: z.strictObject({ channel, number }),
  output: z.object({
    task: taskDetail,
    subtasks: z.array(taskSummary).describe('The first subtasks (task_list with include_subtasks lists them all).'),
    subtask_count: z.number().int(),
    checkpoints: z.array(checkpoint).describe('The most recent checkpoints, oldest first.'),
    checkpoint_count: z.number().int(),
    truncated: truncation.optional(),
  }),
  async handler({ channel, number }, ctx) {
    const board = boardOf(ctx);
    const raw = await board.read(ctx.caller, 'get', { channel, number }, { channel, number });
    const result = {
      task: detailOf((raw.task ?? {}) as Record<string, unknown>),
      subtasks: list(raw.subtasks).map(summaryOf),
      subtask_count: typeof raw.subtaskCount === 'number' ? raw.subtaskCount : list(raw.subtasks).length,
      checkpoints: list(raw.checkpoints).map(checkpointOf),
      checkpoint_count: typeof raw.checkpointCount === 'number' ? raw.checkpointCount : list(raw.checkpoints).length,
    };
    if (bytesOf(result) <= board.budgetBytes) return result;
    const cut = cutTexts(result, board.budgetBytes);
    // Still over: fewer subtasks and checkpoints (the newest checkpoints kept).
    const omitted = result.subtasks.length + result.checkpoints.length;
    result.subtasks = result.subtasks.slice(0, itemsThatFit(result.subtasks, { ...result, subtasks: [] }, board.budgetBytes));
    const keep = itemsThatFit([...result.checkpoints].reverse(), { ...result, checkpoints: [] }, board.budgetBytes);
    result.checkpoints = result.checkpoints.slice(result.checkpoints.length - keep);
    const dropped = omitted - result.subtasks.length - result.checkpoints.length;
    return {
      ...result,
      truncated: {
        reason: 'result_budget' as const,
        budget_bytes: board.budgetBytes,
        ...(dropped > 0 ? { items_omitted: dropped } : {}),
        ...(cut.length > 0 ? { fields_cut: cut } : {}),
        continue_with: `Texts marked "[cut: …]" were shortened. List all subtasks with task_list {"channel": "${channel}", "include_subtasks": true}.`,
      },
    };
  },
});
