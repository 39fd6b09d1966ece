import { z } from 'zod';

/**
 * Request shapes of the runtime routes (docs/task-service.md). Every object is
 * strict: an unknown field is refused by name rather than silently dropped.
 * Rules that need the store or span fields (locators, batch fields, cycles)
 * live with the operation that enforces them.
 */

export const STATUSES = ['todo', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled'] as const;
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type Status = (typeof STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];

/** Workspace, agent and board names as the token route creates them: ids, never paths or free text. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** `#channel` or `#channel:thread`: a source target, and the thread a task is attributed to. */
export const TARGET = /^#([A-Za-z0-9][A-Za-z0-9._-]{0,127})(?::(\S{1,200}))?$/;

const name = z.string().regex(NAME, 'expected a letter or digit, then up to 127 letters, digits, ".", "_" or "-"');
/** A board named by a caller: any string may be asked for; one that is not the caller's board is channel_not_found. */
export const channelRef = z.string().min(1).max(200);
export const taskNumber = z.number().int().positive();
/** Titles and summaries must say something, so they are trimmed and may not be blank. */
const text = (max: number) => z.string().trim().min(1).max(max);
/** List items and free text are stored as given. */
const item = (max: number) => z.string().min(1).max(max);
const target = z.string().regex(TARGET, 'expected "#channel" or "#channel:thread"');

export const taskFields = {
  title: text(500),
  description: z.string().max(64 * 1024),
  status: z.enum(STATUSES),
  priority: z.enum(PRIORITIES),
  assignee: name.nullable(),
  labels: z.array(item(100)).max(50),
  checklist: z.array(z.strictObject({ text: item(1000), done: z.boolean().default(false) })).max(200),
  urls: z.array(item(2048)).max(50),
  messages: z.array(item(4000)).max(100),
  workspaces: z.array(item(1000)).max(50),
  attachments: z
    .array(
      z.strictObject({
        name: item(500),
        url: item(2048),
        sizeBytes: z.number().int().nonnegative().optional(),
        mediaType: item(255).optional(),
      }),
    )
    .max(50),
  blocker: z.string().max(4000).nullable(),
  thread: target.nullable(),
};

/** One item of a create: every field but `messages` and `thread` (the thread comes from `target`). */
export const newTask = z.strictObject({
  title: taskFields.title,
  description: taskFields.description.optional(),
  status: taskFields.status.optional(),
  priority: taskFields.priority.optional(),
  assignee: taskFields.assignee.optional(),
  labels: taskFields.labels.optional(),
  checklist: taskFields.checklist.optional(),
  urls: taskFields.urls.optional(),
  workspaces: taskFields.workspaces.optional(),
  attachments: taskFields.attachments.optional(),
  blocker: taskFields.blocker.optional(),
});
export type NewTask = z.infer<typeof newTask>;

export const createBody = z
  .strictObject({
    channel: channelRef.optional(),
    // Only its type is checked here: a number that is not positive is invalid_parent, not invalid_input.
    parent: z.number().nullable().optional(),
    parentTaskScope: z.strictObject({ kind: z.string().max(100), scopeId: z.string().max(200) }).optional(),
    tasks: z.array(newTask).min(1).max(50),
    target: target.optional(),
    idempotencyKey: z
      .string()
      .trim()
      .min(1)
      .refine((key) => Buffer.byteLength(key, 'utf8') <= 128, 'expected at most 128 UTF-8 bytes')
      .optional(),
    runId: z.string().min(1).max(128).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.idempotencyKey !== undefined && body.runId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['runId'], message: 'required with idempotencyKey' });
    }
  });
export type CreateBody = z.infer<typeof createBody>;

export const locateBody = z.strictObject({ channel: channelRef, number: taskNumber });

export const updateBody = z.strictObject({
  channel: channelRef,
  number: taskNumber,
  expectedUpdatedAt: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'expected an RFC3339 time').optional(),
  title: taskFields.title.optional(),
  description: taskFields.description.optional(),
  status: taskFields.status.optional(),
  priority: taskFields.priority.optional(),
  assignee: taskFields.assignee.optional(),
  labels: taskFields.labels.optional(),
  checklist: taskFields.checklist.optional(),
  urls: taskFields.urls.optional(),
  messages: taskFields.messages.optional(),
  workspaces: taskFields.workspaces.optional(),
  attachments: taskFields.attachments.optional(),
  blocker: taskFields.blocker.optional(),
  thread: taskFields.thread.optional(),
  parent: z.number().nullable().optional(),
});
export type UpdateBody = z.infer<typeof updateBody>;

export const claimBody = z.strictObject({
  channel: channelRef,
  numbers: z
    .array(taskNumber)
    .min(1)
    .max(50)
    .refine((numbers) => new Set(numbers).size === numbers.length, 'expected distinct numbers'),
  claimed: z.boolean(),
});

export const checkpointBody = z.strictObject({ channel: channelRef, number: taskNumber, summary: text(4000) });

export const deleteBody = z.strictObject({
  channel: channelRef,
  number: taskNumber,
  subtaskMode: z.enum(['promote', 'delete']).optional(),
});

export const SORTS = ['updated_desc', 'relevance', 'created_asc', 'number_asc'] as const;
export type Sort = (typeof SORTS)[number];

/** Query strings arrive as text; a repeated parameter arrives as an array and is refused. */
export const listQuery = z.strictObject({
  channel: channelRef,
  query: z.string().max(1000).optional(),
  status: z.enum([...STATUSES, 'active', 'all']).optional(),
  includeSubtasks: z.enum(['true', 'false']).optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().max(1000).optional(),
  sort: z.enum(SORTS).optional(),
  assignee: z.string().min(1).max(128).optional(),
  creator: z.string().min(1).max(128).optional(),
  priority: z.enum(PRIORITIES).optional(),
});
export type ListQuery = z.infer<typeof listQuery>;

export const tokenBody = z.strictObject({
  channels: z.array(name).max(100),
  ttlSeconds: z.number().int().min(1).max(7 * 24 * 3600).optional(),
});
export const refreshBody = z.strictObject({ refreshToken: z.string().min(1).max(200) });
export const idsParams = z.object({ workspaceId: name, agentId: name });
export const eventsQuery = z.strictObject({ after: z.coerce.number().int().nonnegative().optional() });
