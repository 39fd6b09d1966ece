import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../postgres';
import type { AuditEntry, AuditRow } from './chain';
import { AuditKeyConflict, keyScope, nextRow, sameOrConflict, type AuditStore } from './store';
import { AuditChainBroken, type FileWitness } from './witness';

export const AUDIT_SCHEMA = `
CREATE TABLE IF NOT EXISTS dipper_isphere_audit (
  seq BIGINT PRIMARY KEY,
  record_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  run_id TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  key_scope TEXT UNIQUE,
  body TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dipper_isphere_audit_by_approval ON dipper_isphere_audit (approval_id, seq);
CREATE OR REPLACE FUNCTION dipper_isphere_audit_append_only() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS dipper_isphere_audit_no_change ON dipper_isphere_audit;
CREATE TRIGGER dipper_isphere_audit_no_change BEFORE UPDATE OR DELETE ON dipper_isphere_audit FOR EACH ROW EXECUTE FUNCTION dipper_isphere_audit_append_only();
`;

/** Any number: the one lock every writer of the chain takes, on any host. */
const APPEND_LOCK = 7_715_311;

const rowOf = (r: Record<string, unknown>): AuditRow => ({
  seq: Number(r.seq),
  record_id: String(r.record_id),
  body: String(r.body),
  prev_hash: String(r.prev_hash),
  hash: String(r.hash),
  // The lookup columns, when selected: verifyChain checks them against the body.
  ...('kind' in r ? { kind: String(r.kind), run_id: String(r.run_id), approval_id: String(r.approval_id), key_scope: r.key_scope === null ? null : String(r.key_scope) } : {}),
});

/**
 * The chain in PostgreSQL; appends from every host serialised by a
 * transaction-scoped advisory lock. With a witness, each append first
 * checks the chain against it and, once committed, moves it under the lock
 * again: the head never leads the chain, and two writers never move it back.
 */
export class PgAuditStore implements AuditStore {
  constructor(
    private readonly pool: Pool,
    private readonly key: string,
    readonly close: () => Promise<void>,
    private readonly witness?: FileWitness,
  ) {}

  /** Runs `work` in a transaction holding the append lock. */
  private locked<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      return work(client);
    });
  }

  private async checkWitness(client: PoolClient): Promise<void> {
    if (!this.witness) return;
    const seen = this.witness.read();
    const last = await client.query('SELECT seq FROM dipper_isphere_audit ORDER BY seq DESC LIMIT 1');
    const there = seen ? await this.hashAt(client, seen.seq) : undefined;
    this.witness.mustMatch(seen, Number(last.rows[0]?.seq ?? 0), there);
  }

  private async hashAt(client: PoolClient, seq: number): Promise<string | undefined> {
    const { rows } = await client.query('SELECT hash FROM dipper_isphere_audit WHERE seq = $1', [seq]);
    return rows[0] ? String(rows[0].hash) : undefined;
  }

  /** A reused record moves a witness that lags it too: a retry after a crash between commit and witness catches it up. */
  async append(entry: AuditEntry): Promise<AuditRow & { reused: boolean }> {
    const row = await this.locked(async (client) => {
      await this.checkWitness(client);
      const existing = await client.query('SELECT seq, record_id, body, prev_hash, hash FROM dipper_isphere_audit WHERE record_id = $1', [entry.record_id]);
      if (existing.rows[0]) return sameOrConflict(rowOf(existing.rows[0]), entry);
      const head = await client.query('SELECT seq, hash FROM dipper_isphere_audit ORDER BY seq DESC LIMIT 1');
      const next = nextRow(this.key, entry, head.rows[0] ? { seq: Number(head.rows[0].seq), hash: String(head.rows[0].hash) } : undefined);
      try {
        await client.query(
          'INSERT INTO dipper_isphere_audit (seq, record_id, kind, run_id, approval_id, key_scope, body, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
          [next.seq, next.record_id, entry.kind, entry.run_id, entry.approval_id, keyScope(entry), next.body, next.prev_hash, next.hash],
        );
      } catch (err) {
        if ((err as { code?: string; constraint?: string }).code === '23505' && /key_scope/.test(String((err as { constraint?: string }).constraint))) throw new AuditKeyConflict();
        throw err;
      }
      return { ...next, reused: false };
    });
    const witness = this.witness;
    if (witness) {
      // The lock again, after the commit: the row is still there, the chain still the witness's, then the head moves.
      await this.locked(async (client) => {
        await this.checkWitness(client);
        if ((await this.hashAt(client, row.seq)) !== row.hash) throw new AuditChainBroken(`record ${row.seq} is gone from the chain between its commit and its witness`);
        witness.record(row);
      });
    }
    return row;
  }

  async rows(after = 0, limit = 10_000): Promise<AuditRow[]> {
    const { rows } = await this.pool.query('SELECT seq, record_id, kind, run_id, approval_id, key_scope, body, prev_hash, hash FROM dipper_isphere_audit WHERE seq > $1 ORDER BY seq LIMIT $2', [after, limit]);
    return rows.map(rowOf);
  }

  async rowsBefore(seq: number, limit: number): Promise<AuditRow[]> {
    const { rows } = await this.pool.query('SELECT seq, record_id, body, prev_hash, hash FROM dipper_isphere_audit WHERE seq < $1 ORDER BY seq DESC LIMIT $2', [seq, limit]);
    return rows.map(rowOf);
  }

  async ofApproval(approvalId: string): Promise<AuditEntry[]> {
    const { rows } = await this.pool.query('SELECT body FROM dipper_isphere_audit WHERE approval_id = $1 ORDER BY seq', [approvalId]);
    return rows.map((r) => JSON.parse(String(r.body)) as AuditEntry);
  }
}
