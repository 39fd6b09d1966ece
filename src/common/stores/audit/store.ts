import { canonicalJson } from '../../canonicalJson';
import { chainHash, GENESIS, type AuditEntry, type AuditRow } from './chain';

/**
 * Where the chain is kept: SQLite in the data folder on one host, a
 * PostgreSQL table across hosts. Append-only (no update or delete is
 * offered, and the database refuses them), each append serialised with
 * every other writer so the chain has one order.
 */
export interface AuditStore {
  /** Appends the record, or returns the one already stored under its record_id (then `reused`). */
  append(entry: AuditEntry): Promise<AuditRow & { reused: boolean }>;
  /** Rows in chain order. */
  rows(after?: number, limit?: number): Promise<AuditRow[]>;
  /** Rows before `seq`, newest first (the console's page). */
  rowsBefore(seq: number, limit: number): Promise<AuditRow[]>;
  /** The records of one approval (its intent and outcome), in order. */
  ofApproval(approvalId: string): Promise<AuditEntry[]>;
  close(): Promise<void>;
}

/** The same record_id with a different record: a bug or a forgery, never overwritten. */
export class AuditRecordConflict extends Error {
  constructor(readonly recordId: string) {
    super(`audit record ${recordId} exists with other contents`);
  }
}

/** An idempotency key already used, with another approval, by this agent for this tool in this run. */
export class AuditKeyConflict extends Error {
  constructor() {
    super('this idempotency key was already used for another send');
  }
}

export { keyScope } from './chain';

/** The row to insert after `head`. */
export function nextRow(key: string, entry: AuditEntry, head: { seq: number; hash: string } | undefined): AuditRow {
  const body = canonicalJson(entry);
  const prev = head?.hash ?? GENESIS;
  const seq = (head?.seq ?? 0) + 1;
  return { seq, record_id: entry.record_id, body, prev_hash: prev, hash: chainHash(key, prev, seq, body) };
}

/** A stored record_id: the same record comes back; another one is refused. */
export function sameOrConflict(existing: AuditRow, entry: AuditEntry): AuditRow & { reused: boolean } {
  if (existing.body !== canonicalJson(entry)) throw new AuditRecordConflict(entry.record_id);
  return { ...existing, reused: true };
}
