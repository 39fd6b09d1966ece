import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../canonicalJson';

/**
 * The tamper-evident chain of iSphere write records. Each record's hash is
 * an HMAC, under a key only Dipper holds, of the previous record's hash and
 * the record's canonical JSON: someone who can write the database but does
 * not hold the key cannot edit, drop or reorder records and recompute a
 * chain that verifies. A chain cannot show its own last records removed;
 * the anchors (each append's seq and hash, written to the event log as
 * well) can.
 */

/** One real write attempt's record: the intent before anything reaches the bridge, the outcome before the tool answers. */
export interface AuditEntry {
  /** `<approval_id>/intent` or `<approval_id>/outcome`: appending it again returns the stored row. */
  record_id: string;
  kind: 'intent' | 'outcome';
  run_id: string;
  /** The agent that asked for the send. */
  requester: string;
  tool: string;
  target: { target_type: string; target_id: string; display_name: string | null };
  content_sha256: string | null;
  file_sha256: string | null;
  file_size_bytes: number | null;
  approval_id: string;
  /** The named operator who approved, and how (console, api, webhook). */
  approver: string;
  approved_via: string;
  /** sha256 of the idempotency key (the key itself may be anything an agent chose). */
  key_sha256: string | null;
  client_message_id: string;
  source: string;
  /** null on an intent; on an outcome what happened. */
  result: null | 'sent' | 'rejected' | 'failed' | 'blocked' | 'unknown';
  /** The outcome was learnt by looking the send up after its answer was lost. */
  reconciled: boolean;
  message_ref: string | null;
  requested_at: string;
  approved_at: string;
  /** When this record was made (RFC3339 UTC). */
  at: string;
}

export interface AuditRow {
  seq: number;
  record_id: string;
  body: string;
  prev_hash: string;
  hash: string;
  /** Columns kept beside the body for lookups; each must say what the body says (verifyChain checks). */
  kind?: string;
  run_id?: string;
  approval_id?: string;
  key_scope?: string | null;
}

export interface Anchor {
  seq: number;
  hash: string;
}

/** Scopes an idempotency key to its run, agent and tool: only an intent carries it. */
export function keyScope(e: AuditEntry): string | null {
  if (e.kind !== 'intent' || e.key_sha256 === null) return null;
  return createHash('sha256').update(canonicalJson([e.run_id, e.requester, e.tool, e.key_sha256])).digest('hex');
}

/** The hash before the first record. */
export const GENESIS = '0'.repeat(64);

/** The record's place is covered with its body: moving a record to another seq breaks its hash. */
export function chainHash(key: string, prev: string, seq: number, body: string): string {
  return createHmac('sha256', key).update(prev).update('\n').update(String(seq)).update('\n').update(body).digest('hex');
}

const sameHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export type Problem =
  | { kind: 'edited'; seq: number }
  | { kind: 'removed'; seq: number }
  | { kind: 'reordered'; seq: number }
  | { kind: 'tail_truncated'; seq: number };

/** What a problem says to a person. */
export function describe(p: Problem): string {
  switch (p.kind) {
    case 'edited':
      return `edited at ${p.seq}: the record does not match its hash`;
    case 'removed':
      return `removed at ${p.seq}: a record is missing there`;
    case 'reordered':
      return `reordered at ${p.seq}: the record does not follow the one before it`;
    case 'tail_truncated':
      return `tail truncated: record ${p.seq} was appended (the event log has its anchor) and is no longer there`;
  }
}

/** The lookup columns say what the hashed body says (those a store returned). */
function columnsAgree(row: AuditRow): boolean {
  let entry: AuditEntry;
  try {
    entry = JSON.parse(row.body) as AuditEntry;
  } catch {
    return false;
  }
  if (row.record_id !== entry.record_id) return false;
  if (row.kind !== undefined && row.kind !== entry.kind) return false;
  if (row.run_id !== undefined && row.run_id !== entry.run_id) return false;
  if (row.approval_id !== undefined && row.approval_id !== entry.approval_id) return false;
  return row.key_scope === undefined || row.key_scope === keyScope(entry);
}

/**
 * Checks rows (in seq order) against the key and the anchors: contiguous
 * seqs from 1, each record's HMAC, each link to the record before, and
 * every anchor present with its hash.
 */
export function verifyChain(rows: AuditRow[], key: string, anchors: Anchor[]): Problem[] {
  const problems: Problem[] = [];
  const hashes = new Set(rows.map((r) => r.hash));
  let prev = GENESIS;
  let expected = 1;
  for (const row of rows) {
    const gap = row.seq !== expected;
    for (let s = expected; s < row.seq; s++) problems.push({ kind: 'removed', seq: s });
    if (!sameHex(chainHash(key, row.prev_hash, row.seq, row.body), row.hash) || !columnsAgree(row)) problems.push({ kind: 'edited', seq: row.seq });
    else if (!gap && row.prev_hash !== prev) {
      // Linked to a record that is still here, elsewhere: moved. Linked to one that is gone: something before it was removed.
      problems.push(hashes.has(row.prev_hash) ? { kind: 'reordered', seq: row.seq } : { kind: 'removed', seq: row.seq - 1 });
    }
    prev = row.hash;
    expected = row.seq + 1;
  }
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  const last = rows.at(-1)?.seq ?? 0;
  for (const a of anchors) {
    const row = bySeq.get(a.seq);
    if (!row && a.seq > last) problems.push({ kind: 'tail_truncated', seq: a.seq });
    else if (!row) {
      if (!problems.some((p) => p.kind === 'removed' && p.seq === a.seq)) problems.push({ kind: 'removed', seq: a.seq });
    } else if (row.hash !== a.hash && !problems.some((p) => p.seq === a.seq)) problems.push({ kind: 'edited', seq: a.seq });
  }
  // One report per truncated tail: the earliest missing anchor says it.
  const firstCut = problems.filter((p) => p.kind === 'tail_truncated').sort((a, b) => a.seq - b.seq)[0];
  return problems.filter((p) => p.kind !== 'tail_truncated' || p === firstCut).sort((a, b) => a.seq - b.seq);
}
