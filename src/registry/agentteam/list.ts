import { createHash } from 'node:crypto';
import { z } from 'zod';
import { itemsThatFit } from '../budget';
import { agentRef, agentteamTool, boardOf, channel, defined, priority, STATUSES } from './common';
import { taskError } from './errors';
import { summaryOf, taskSummary, truncation } from './shapes';

const SORTS = ['updated_desc', 'relevance', 'created_asc', 'number_asc'] as const;

/**
 * Dipper's cursor wraps the service's: the service cursor of the page, how
 * many of its items were already shown (a page cut to the result budget
 * continues inside it), and a digest of the query, so a cursor used with
 * other filters is refused instead of paging through something else.
 */
interface Cursor {
  c: string | null;
  s: number;
  d: string;
}

const digestOf = (q: Record<string, unknown>) => createHash('sha256').update(JSON.stringify(q)).digest('base64url').slice(0, 16);
const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decode(raw: string, digest: string): Cursor {
  let c: Cursor | undefined;
  try {
    c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
  } catch {
    c = undefined;
  }
  if (!c || typeof c.s !== 'number' || c.s < 0 || c.s > 100 || (c.c !== null && typeof c.c !== 'string') || c.d !== digest) {
    throw taskError('invalid_cursor', 'This cursor does not belong to this query (a filter, sort, status or query changed). Start again without a cursor.', {
      fieldErrors: { cursor: 'not a cursor of this query' },
    });
  }
  return c;
}

export const taskList = agentteamTool({
  name: 'task_list',
  title: 'List or search tasks',
  description:
    'Browse one board\'s tasks (no query), or search it (query). Defaults: active tasks (not done or cancelled), top-level only, 20 per page, most recently updated first (by relevance when searching). Use task_get for one task\'s full detail.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  input: z.strictObject({
    channel,
    query: z.string().max(500).describe('Words to search titles and descriptions for; omit or leave empty to browse.').optional(),
    status: z
      .enum(['active', ...STATUSES, 'all'])
      .describe('Which tasks: active (default: not done or cancelled), one status, or all (only with a non-empty query).')
      .optional(),
    include_subtasks: z.boolean().describe('Include subtasks beside top-level tasks (default false).').optional(),
    limit: z.number().int().min(1).max(100).describe('Tasks per page, 1-100 (default 20).').optional(),
    cursor: z.string().max(2000).describe('next_cursor of the previous page of this same query.').optional(),
    sort: z.enum(SORTS).describe('updated_desc (default when browsing), relevance (default when searching), created_asc, number_asc.').optional(),
    filters: z
      .strictObject({
        assignee: z.union([z.enum(['me', 'none']), agentRef]).describe('me, none (unassigned), or an agent id.').optional(),
        creator: z.union([z.literal('me'), agentRef]).describe('me, or an agent id.').optional(),
        priority: priority.optional(),
      })
      .describe('Narrow the list further (all optional).')
      .optional(),
  }),
  output: z.object({
    items: z.array(taskSummary),
    next_cursor: z.string().optional(),
    truncated: truncation.optional(),
  }),
  async handler(input, ctx) {
    const board = boardOf(ctx);
    const query = input.query?.trim() ?? '';
    if (input.status === 'all' && !query) {
      throw taskError('invalid_input', 'status "all" is for searches: give a query, or browse one status at a time.', {
        fieldErrors: { status: 'all needs a non-empty query' },
      });
    }
    const limit = input.limit ?? 20;
    const params = defined({
      channel: input.channel,
      query: query || undefined,
      status: input.status,
      includeSubtasks: input.include_subtasks,
      sort: input.sort,
      assignee: input.filters?.assignee,
      creator: input.filters?.creator,
      priority: input.filters?.priority,
    });
    const digest = digestOf(params);
    const at = input.cursor ? decode(input.cursor, digest) : { c: null, s: 0, d: digest };
    const page = await board.read(ctx.caller, 'list', { ...params, limit: Math.min(100, at.s + limit), ...(at.c ? { cursor: at.c } : {}) }, { channel: input.channel });
    const all = (Array.isArray(page.items) ? (page.items as Record<string, unknown>[]) : []).slice(at.s).map(summaryOf);
    const items = all.slice(0, limit);
    const serverNext = typeof page.nextCursor === 'string' ? page.nextCursor : null;
    const fit = itemsThatFit(items, { next_cursor: 'x'.repeat(200) }, board.budgetBytes);
    if (fit < items.length) {
      const shown = Math.max(fit, 1);
      return {
        items: items.slice(0, shown),
        next_cursor: encode({ c: at.c, s: at.s + shown, d: digest }),
        truncated: {
          reason: 'result_budget' as const,
          budget_bytes: board.budgetBytes,
          items_omitted: items.length - shown,
          continue_with: 'Call task_list again with next_cursor (same query and filters) for the rest.',
        },
      };
    }
    const more = all.length > limit ? encode({ c: at.c, s: at.s + limit, d: digest }) : serverNext ? encode({ c: serverNext, s: 0, d: digest }) : undefined;
    return { items, ...(more ? { next_cursor: more } : {}) };
  },
});
