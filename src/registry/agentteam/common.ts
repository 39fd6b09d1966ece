import { z } from 'zod';
import type { TaskBoardAccess } from '../capabilities';
import { defineTool, type ToolContext, type ToolDef } from '../types';
import { internalError } from '../../common/toolErrors';

/** Workspace and agent come from the caller's token; the run scopes idempotency keys. */
const HIDDEN = ['workspace_id', 'caller_agent_id', 'run_id'] as const;

const FLAGS = {
  read_only: { readOnly: true, destructive: false, idempotent: true },
  agent_mutation: { readOnly: false, destructive: false, idempotent: false },
  destructive: { readOnly: false, destructive: true, idempotent: false },
} as const;

type Fixed = 'surface' | 'owner' | 'hiddenContext' | 'readOnly' | 'destructive' | 'idempotent' | 'resultBudget';

/** An agentteam tool: the task board's owner, hidden context, result budget, and flags from its permission class. */
export function agentteamTool<In extends z.ZodObject, Out>(
  def: Omit<ToolDef<In, Out>, Fixed> & Required<Pick<ToolDef, 'idempotency' | 'concurrency'>>,
): ToolDef<In, Out> {
  const flags = { ...FLAGS[def.permission], idempotent: def.idempotency === 'read' || def.idempotency === 'desired_state' };
  return defineTool({ ...def, surface: 'agentteam', owner: 'task-board', hiddenContext: HIDDEN, resultBudget: 'standard', ...flags });
}

export function boardOf(ctx: ToolContext): TaskBoardAccess {
  // Served only where the gateway wired a Task API; a context without one is a wiring fault, not the caller's.
  if (!ctx.tasks) throw internalError();
  return ctx.tasks;
}

/** A board: the run's (`run_…`) or a team's (`tm_…`) id, or a board of an external Task service. */
export const channel = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'a board name is 1-100 letters, digits, "_", "." or "-"')
  .describe("The board: your run's board is your run id (run_…), a team's board is its team id (tm_…, as spawn_agent and list_peers show it).");

export const number = z.number().int().min(1).max(1_000_000_000).describe('The task number on that board (shown as #t12).');

export const STATUSES = ['todo', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled'] as const;
export const status = z.enum(STATUSES).describe('Lifecycle status.');
export const priority = z.enum(['low', 'normal', 'high', 'urgent']).describe('Priority (default normal).');
export const agentRef = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,100}$/, 'not an agent id')
  .describe('An agent id (ag_…), as list_peers shows it.');

const text = (max: number, what: string) => z.string().max(max).describe(what);

/** The profile fields one task carries, shared by task_create (rich single task) and task_update. */
export const profileFields = {
  description: text(20_000, 'Markdown description.').optional(),
  status: status.optional(),
  priority: priority.optional(),
  labels: z.array(z.string().min(1).max(50)).max(20).describe('Labels (replaces the list).').optional(),
  checklist: z
    .array(z.strictObject({ text: z.string().min(1).max(500), done: z.boolean().describe('Whether the item is done (default false).').optional() }))
    .max(100)
    .describe('Checklist items (replaces the list).')
    .optional(),
  urls: z.array(z.string().url().max(2000)).max(50).describe('Related URLs (replaces the list).').optional(),
  workspaces: z.array(z.string().min(1).max(500)).max(20).describe('Workspace folders the work lives in (replaces the list).').optional(),
  attachments: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(200),
        url: z.string().url().max(2000),
        size_bytes: z.number().int().min(0).optional(),
        media_type: z.string().max(100).optional(),
      }),
    )
    .max(20)
    .describe('Attachment metadata; the files themselves stay where the URLs point (replaces the list).')
    .optional(),
};

/** Deep snake_case → camelCase of object keys, for the Task API's request bodies. */
export function toCamel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCamel);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()), toCamel(v)]));
}

/** Deep camelCase → snake_case of object keys, for model-facing results. */
export function toSnake(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toSnake);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), toSnake(v)]));
}

/** Drops undefined values, so an omitted field is not sent at all. */
export function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
