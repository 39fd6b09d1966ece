import { createHash } from 'node:crypto';
import { canonicalJson } from '../common/canonicalJson';
import { TaskServiceError } from './errors';

/** Where the next page starts: the sort key and number of the last task shown. */
export interface Position {
  key: number;
  number: number;
}

/**
 * Cursors carry a digest of the query they continue, so one replayed with
 * other filters is refused instead of paging through a different list. They
 * are not secret: a forged one can only start a list the caller may read
 * anyway at some other point.
 */
export function queryDigest(params: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(params)).digest('base64url').slice(0, 22);
}

export function encodeCursor(position: Position, digest: string): string {
  return Buffer.from(JSON.stringify({ k: position.key, n: position.number, q: digest })).toString('base64url');
}

export function decodeCursor(cursor: string, digest: string): Position {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const c = parsed as { k?: unknown; n?: unknown; q?: unknown } | null;
  if (!c || typeof c !== 'object' || typeof c.k !== 'number' || !Number.isInteger(c.n) || typeof c.q !== 'string') {
    throw invalidCursor('This cursor is not one this service gave out.');
  }
  if (c.q !== digest) throw invalidCursor('This cursor belongs to a list with other parameters; start again without it.');
  return { key: c.k, number: c.n as number };
}

function invalidCursor(message: string): TaskServiceError {
  return new TaskServiceError(400, 'invalid_cursor', message, { field: 'cursor' });
}
