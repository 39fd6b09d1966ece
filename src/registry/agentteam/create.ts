import { z } from 'zod';
import { agentRef, agentteamTool, boardOf, channel, defined, profileFields, toCamel } from './common';
import { taskError } from './errors';

const RICH_FIELDS = ['description', 'status', 'priority', 'assignee', 'labels', 'checklist', 'urls', 'workspaces', 'attachments', 'blocker'] as const;

const newTask = z.strictObject({
  title: z.string().trim().min(1).max(500).describe('Task title.'),
  ...profileFields,
  assignee: agentRef.describe('Agent id to assign (only for a single task).').optional(),
  blocker: z.string().max(2000).describe('What blocks it (only for a single task).').optional(),
});

const created = z.object({
  number: z.number().int(),
  scope_id: z.string(),
  channel: z.string(),
  title: z.string(),
  parent_number: z.number().int().nullable(),
});

/** Keys are trimmed and at most 128 UTF-8 bytes (contract 13.2). */
const idempotencyKey = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .refine((k) => Buffer.byteLength(k, 'utf8') <= 128, 'at most 128 UTF-8 bytes')
  .describe('Your key for this create (at most 128 bytes): repeating the call with the same key and the same arguments returns the first result (reused: true) and creates nothing; the same key with other arguments is refused.');

export const taskCreate = agentteamTool({
  name: 'task_create',
  title: 'Create tasks',
  description:
    'Create one task (all fields) or several by title only, on a board (channel, optionally under a parent number) or under a task you have the scope of (parent_task_scope). Give an idempotency_key when you may need to repeat the call.',
  permission: 'agent_mutation',
  idempotency: 'idempotency_key',
  concurrency: 'none',
  input: z.strictObject({
    channel: channel.describe('The board to create on. Exactly one of channel or parent_task_scope.').optional(),
    parent: z.number().int().positive().describe('With channel: create as subtasks of this task number on that board.').optional(),
    parent_task_scope: z
      .strictObject({
        kind: z.literal('task').describe('Always "task".'),
        scope_id: z.string().min(1).max(200).describe("The parent's scope_id (from task_get or task_list)."),
      })
      .describe('Create as subtasks of this exact task; not with channel or parent.')
      .optional(),
    tasks: z.array(newTask).min(1).max(50).describe('One task with any fields, or up to 50 with a title only.'),
    target: z
      .string()
      .regex(/^#[A-Za-z0-9][A-Za-z0-9_.-]{0,99}(:[A-Za-z0-9_.-]{1,200})?$/, 'a target is #channel or #channel:thread')
      .describe('Where the work came from (#channel:thread): the task is shown in that thread. Its channel must be the task\'s board.')
      .optional(),
    idempotency_key: idempotencyKey.optional(),
  }),
  output: z.object({
    tasks: z.array(created),
    reused: z.boolean().describe('true when this answers an earlier call with the same idempotency_key: nothing new was created.'),
  }),
  async handler(input, ctx) {
    checkLocator(input);
    if (input.tasks.length > 1) {
      for (const [i, t] of input.tasks.entries()) {
        const rich = RICH_FIELDS.find((f) => t[f] !== undefined);
        if (rich) {
          throw taskError('invalid_input', 'Several tasks at once take a title only; create a task with more fields on its own.', {
            fieldErrors: { [`tasks[${i}].${rich}`]: 'only title is accepted when creating more than one task' },
          });
        }
      }
    }
    const body = defined({
      channel: input.channel,
      parent: input.parent,
      parentTaskScope: input.parent_task_scope ? toCamel(input.parent_task_scope) : undefined,
      tasks: toCamel(input.tasks),
      target: input.target,
      idempotencyKey: input.idempotency_key,
      // The key is scoped to this run (docs/decisions.md): the run is hidden context, never model input.
      runId: input.idempotency_key ? ctx.caller.runId : undefined,
    }) as Record<string, unknown>;
    const answer = await boardOf(ctx).mutate(ctx.caller, 'create', body, {
      tool: 'task_create',
      key: input.idempotency_key,
      retrySafe: input.idempotency_key !== undefined,
      about: { channel: input.channel },
    });
    const tasks = (Array.isArray(answer.tasks) ? answer.tasks : []) as Record<string, unknown>[];
    return {
      tasks: tasks.map((t) => ({
        number: Number(t.number),
        scope_id: String(t.scopeId ?? ''),
        channel: String(t.channel ?? input.channel ?? ''),
        // Titles are echoed short: fifty long ones would crowd the result.
        title: String(t.title ?? '').slice(0, 120),
        parent_number: typeof t.parentNumber === 'number' ? t.parentNumber : null,
      })),
      reused: answer.reused === true,
    };
  },
});

/** Exactly one locator, checked before anything is sent (contract 13.2). */
function checkLocator(input: { channel?: string; parent?: number; parent_task_scope?: unknown }): void {
  if (input.parent_task_scope !== undefined && (input.channel !== undefined || input.parent !== undefined)) {
    const field = input.channel !== undefined ? 'channel' : 'parent';
    throw taskError('invalid_locator', 'parent_task_scope already names the board and the parent: leave out channel and parent.', {
      fieldErrors: { [field]: 'not allowed with parent_task_scope' },
    });
  }
  if (input.parent_task_scope === undefined && input.channel === undefined) {
    throw taskError('invalid_locator', 'Say where to create: a channel (and optionally a parent number), or a parent_task_scope.', {
      fieldErrors: { channel: 'required unless parent_task_scope is given' },
    });
  }
}
