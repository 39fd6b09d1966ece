import { createHash } from 'node:crypto';
import { BridgeError } from './errors';

/** Where an item sits in its list's order: compared field by field. */
export type SortKey = string[];
export type Order = (a: SortKey, b: SortKey) => number;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export const ascending: Order = (a, b) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    // Code-unit order, not a locale's: the same everywhere, so a cursor means the same on every machine.
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
};
export const descending: Order = (a, b) => ascending(b, a);

/**
 * One page of a list. The cursor holds the sort key of the last item shown
 * (so an item added between two pages neither repeats nor shifts the rest)
 * and a digest of the query, so that replayed with other filters it is
 * refused rather than paging through a different list. The page size is not
 * part of the query: a caller may change it between pages.
 */
export function page<T>(items: T[], opts: { query: unknown[]; cursor?: string; limit: number; key: (item: T) => SortKey; order: Order }): Page<T> {
  const digest = createHash('sha256').update(JSON.stringify(opts.query)).digest('base64url').slice(0, 22);
  const sorted = [...items].sort((x, y) => opts.order(opts.key(x), opts.key(y)));
  let start = 0;
  if (opts.cursor !== undefined) {
    const after = readCursor(opts.cursor, digest);
    start = sorted.findIndex((item) => opts.order(opts.key(item), after) > 0);
    if (start < 0) start = sorted.length;
  }
  const shown = sorted.slice(start, start + opts.limit);
  const more = start + opts.limit < sorted.length;
  const last = shown[shown.length - 1];
  return {
    items: shown,
    next_cursor: more && last !== undefined ? Buffer.from(JSON.stringify({ q: digest, after: opts.key(last) })).toString('base64url') : null,
  };
}

function readCursor(cursor: string, digest: string): SortKey {
  const parsed = decode(cursor);
  const after = parsed?.after;
  if (typeof parsed?.q !== 'string' || !Array.isArray(after) || !after.every((k) => typeof k === 'string')) {
    throw new BridgeError(400, 'invalid_cursor', 'cursor: not a cursor this bridge gave out.');
  }
  if (parsed.q !== digest) throw new BridgeError(400, 'invalid_cursor', 'cursor: it belongs to another query; start again without it.');
  return after as SortKey;
}

function decode(cursor: string): { q?: unknown; after?: unknown } | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? parsed : null;
  } catch {
    return null;
  }
}
