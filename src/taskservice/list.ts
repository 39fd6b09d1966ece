import { requireBoard } from './boards';
import { decodeCursor, encodeCursor, queryDigest } from './cursor';
import { invalidInput, TaskServiceError } from './errors';
import type { ListQuery, Sort } from './inputs';
import type { Caller, Store } from './store';
import { fold, TASK_COLUMNS, taskView, type TaskRow } from './tasks';

/** More terms than this is a paste, not a search; the bound also keeps the statement cache small. */
const MAX_TERMS = 20;

/**
 * How each sort pages: its key, the key's direction, and the direction of
 * the number that breaks ties. Paging is by the last key seen (keyset), so a
 * task created between two pages neither repeats nor shifts the rest.
 */
const ORDERS: Record<Sort, { key: (terms: number) => string; desc: boolean; numberDesc: boolean }> = {
  updated_desc: { key: () => 't.updated_at', desc: true, numberDesc: true },
  created_asc: { key: () => 't.created_at', desc: false, numberDesc: false },
  number_asc: { key: () => 't.number', desc: false, numberDesc: false },
  // Terms found in the title, so title matches come first; then the number.
  relevance: { key: (terms) => `(${Array(terms).fill('(instr(t.title_fold, ?) > 0)').join(' + ')})`, desc: true, numberDesc: false },
};

/** task_list: browse (no query) or search (every term in the title or description) of one board. */
export function listTasks(store: Store, caller: Caller, q: ListQuery) {
  const terms = fold(q.query ?? '')
    .split(/\s+/)
    .filter(Boolean);
  if (terms.length > MAX_TERMS) throw invalidInput('query', `query: at most ${MAX_TERMS} terms.`);
  const searching = terms.length > 0;
  const status = q.status ?? 'active';
  if (status === 'all' && !searching) {
    throw new TaskServiceError(400, 'invalid_status', 'status "all" is for searches: give a query, or a single status.', { field: 'status' });
  }
  const sort = q.sort ?? (searching ? 'relevance' : 'updated_desc');
  if (sort === 'relevance' && !searching) throw invalidInput('sort', 'sort: "relevance" needs a query.');
  const subtasks = q.includeSubtasks === 'true';
  const limit = q.limit ?? 20;
  requireBoard(store, caller, q.channel);

  const where: string[] = [];
  const args: unknown[] = [];
  const filter = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    args.push(...values);
  };
  filter('t.workspace = ? AND t.channel = ? AND t.deleted_at IS NULL', caller.workspace, q.channel);
  if (!subtasks) filter('t.parent_number IS NULL');
  if (status === 'active') filter("t.status NOT IN ('done', 'cancelled')");
  else if (status !== 'all') filter('t.status = ?', status);
  if (q.assignee === 'none') filter('t.assignee IS NULL');
  else if (q.assignee !== undefined) filter('t.assignee = ?', q.assignee === 'me' ? caller.agent : q.assignee);
  if (q.creator !== undefined) filter('t.creator = ?', q.creator === 'me' ? caller.agent : q.creator);
  if (q.priority !== undefined) filter('t.priority = ?', q.priority);
  for (const term of terms) filter('(instr(t.title_fold, ?) > 0 OR instr(t.description_fold, ?) > 0)', term, term);
  const order = ORDERS[sort];
  const keyArgs = sort === 'relevance' ? terms : [];
  const digest = queryDigest({
    workspace: caller.workspace,
    agent: caller.agent,
    channel: q.channel,
    terms,
    status,
    subtasks,
    sort,
    assignee: q.assignee,
    creator: q.creator,
    priority: q.priority,
  });
  const after = q.cursor === undefined ? null : decodeCursor(q.cursor, digest);
  // The next page starts strictly after the last task shown, in the sort's own direction.
  const keyset = after ? `WHERE sort_key ${order.desc ? '<' : '>'} ? OR (sort_key = ? AND number ${order.numberDesc ? '<' : '>'} ?)` : '';
  const keysetArgs = after ? [after.key, after.key, after.number] : [];
  const dir = (desc: boolean) => (desc ? 'DESC' : 'ASC');
  const text = `SELECT * FROM (SELECT ${TASK_COLUMNS}, ${order.key(terms.length)} AS sort_key FROM tasks t WHERE ${where.join(' AND ')})
    ${keyset} ORDER BY sort_key ${dir(order.desc)}, number ${dir(order.numberDesc)} LIMIT ?`;
  const rows = store.sql(text).all(...keyArgs, ...args, ...keysetArgs, limit + 1) as (TaskRow & { sort_key: number })[];

  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(taskView),
    ...(rows.length > limit ? { nextCursor: encodeCursor({ key: last.sort_key, number: last.number }, digest) } : {}),
  };
}
