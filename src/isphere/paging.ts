import { createHash } from 'node:crypto';
import { ConnectorError } from '../common/isphere/errors';
import type { Page, SourceName } from './connectors/types';

/**
 * Where a list continues: the source that answered (a cursor never moves
 * to another source), the source's own cursor of the page, how many of
 * that page's items were already gone through, and the page size asked
 * for, so the same page comes back. `d` binds it to one query of one agent.
 */
export interface Position {
  u: string | null;
  k: number;
  n: number;
}

interface Cursor extends Position {
  s: SourceName;
  d: string;
}

/** A digest of what a cursor belongs to: the tool, the normalised query, the agent. */
export const queryDigest = (parts: unknown[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);

export function writeCursor(source: SourceName, at: Position, digest: string): string {
  return Buffer.from(JSON.stringify({ s: source, ...at, d: digest } satisfies Cursor)).toString('base64url');
}

/** A cursor of this query, or INVALID_ARGUMENT naming `cursor`: one from another query or agent is never misread. */
export function readCursor(raw: string, digest: string): Cursor {
  let c: Partial<Cursor> | undefined;
  try {
    c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    c = undefined;
  }
  const ok =
    c !== undefined &&
    c.d === digest &&
    typeof c.s === 'string' &&
    (c.u === null || typeof c.u === 'string') &&
    Number.isInteger(c.k) &&
    Number.isInteger(c.n) &&
    c.k! >= 0 &&
    c.n! >= 1 &&
    c.n! <= 200 &&
    c.k! < c.n!;
  if (!ok) throw new ConnectorError('INVALID_ARGUMENT', 'This cursor does not belong to this query; call again without it to start over.', false, { field: 'cursor' });
  return c as Cursor;
}

export interface Filled<T> {
  items: T[];
  /** The position just after each item, null after the very last item of the list. */
  after: (Position | null)[];
  /** Where the next call continues, null when the list is done. */
  next: Position | null;
}

/** Pages of the source read to fill one answer when the policy hides items; past them the answer is short but has a cursor. */
const MAX_PAGES = 5;

/**
 * Reads source pages from `start` until `limit` items are kept (`keep`: the
 * access policy and any keyword filter) or the list ends. Items are kept
 * in the source's order; filtered ones still advance the position.
 */
export async function fill<T>(limit: number, start: Position, fetch: (at: { cursor: string | null; limit: number }) => Promise<Page<T>>, keep: (item: T) => boolean): Promise<Filled<T>> {
  const items: T[] = [];
  const after: (Position | null)[] = [];
  let at = start;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await fetch({ cursor: at.u, limit: at.n });
    const following: Position | null = page.next_cursor === null ? null : { u: page.next_cursor, k: 0, n: Math.min(200, limit) };
    for (let i = at.k; i < page.items.length; i++) {
      if (!keep(page.items[i])) continue;
      items.push(page.items[i]);
      after.push(i + 1 < page.items.length ? { ...at, k: i + 1 } : following);
      if (items.length === limit) return { items, after, next: after.at(-1) ?? null };
    }
    if (following === null) return { items, after, next: null };
    at = following;
  }
  return { items, after, next: at };
}

/** The first position of a list read `limit` at a time. */
export const startOf = (limit: number): Position => ({ u: null, k: 0, n: Math.min(200, limit) });
