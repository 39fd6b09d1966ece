import { z } from 'zod';
import { agentRef, agentteamTool, boardOf, channel, defined, number, profileFields, toCamel } from './common';
import { taskError } from './errors';
import { detailOf, taskDetail } from './shapes';

const MUTATION_FIELDS = ['title', 'description', 'status', 'priority', 'assignee', 'labels', 'checklist', 'urls', 'messages', 'workspaces', 'attachments', 'blocker', 'thread', 'parent'] as const;

export const taskUpdate = agentteamTool({
  name: 'task_update',
  title: 'Update a task',
  description:
    "Change a task's fields or lifecycle status (omitted fields stay as they are; lists are replaced whole). Pass expected_updated_at from your last read to refuse the change if someone changed the task since. Claims use task_set_claim, progress notes task_checkpoint.",
  permission: 'agent_mutation',
  idempotency: 'none',
  concurrency: 'expected_updated_at',
  input: z.strictObject({
    channel,
    number,
    expected_updated_at: z.iso
      .datetime({ offset: false })
      .describe("The task's updated_at as you last read it (RFC3339 UTC); the change is refused if the task changed since. Omit to change it regardless.")
      .optional(),
    title: z.string().trim().min(1).max(500).describe('New title.').optional(),
    ...profileFields,
    assignee: agentRef.nullable().describe('Agent id to assign, or null to unassign.').optional(),
    messages: z.array(z.string().min(1).max(500)).max(50).describe('References to messages about the task (replaces the list).').optional(),
    blocker: z.string().max(2000).nullable().describe('What blocks it, or null to clear.').optional(),
    thread: z
      .string()
      .regex(/^#[A-Za-z0-9][A-Za-z0-9_.-]{0,99}(:[A-Za-z0-9_.-]{1,200})?$/, 'a thread is #channel or #channel:thread')
      .nullable()
      .describe('The thread the task is discussed in, or null to clear.')
      .optional(),
    parent: z.number().int().positive().nullable().describe('Move it under this task number of the same board, or null to make it top-level.').optional(),
  }),
  output: z.object({ task: taskDetail }),
  async handler(input, ctx) {
    if (!MUTATION_FIELDS.some((f) => input[f] !== undefined)) {
      throw taskError('empty_update', 'Nothing to change: give at least one field to update.', {
        // Keyed by the fields that could have been given, so a client can show the error beside each of them.
        fieldErrors: Object.fromEntries(MUTATION_FIELDS.map((f) => [f, `give this or another of ${MUTATION_FIELDS.join(', ')}`])),
      });
    }
    const { channel: board, number: n, expected_updated_at, ...fields } = input;
    const body = defined({ channel: board, number: n, expectedUpdatedAt: expected_updated_at, ...(toCamel(fields) as Record<string, unknown>) });
    const answer = await boardOf(ctx).mutate(ctx.caller, 'update', body, { tool: 'task_update', retrySafe: false, about: { channel: board, number: n } });
    return { task: detailOf((answer.task ?? {}) as Record<string, unknown>) };
  },
});
