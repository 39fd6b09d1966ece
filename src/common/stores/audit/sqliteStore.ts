import type Database from 'better-sqlite3';
import { openSqlite } from '../sqlite';
import type { AuditEntry, AuditRow } from './chain';
import { AuditKeyConflict, keyScope, nextRow, sameOrConflict, type AuditStore } from './store';
import { AuditChainBroken, type FileWitness } from './witness';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY,
  record_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  run_id TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  key_scope TEXT,
  body TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS audit_key_scope ON audit (key_scope) WHERE key_scope IS NOT NULL;
CREATE INDEX IF NOT EXISTS audit_by_approval ON audit (approval_id, seq);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`;

/**
 * The chain in a SQLite file of the data folder; appends of every process on
 * the host serialised by an IMMEDIATE transaction. With a witness, each
 * append first checks the chain against it and, once committed, moves it in
 * a second locked step: the head never leads the chain, and two writers
 * never move it back.
 */
export class SqliteAuditStore implements AuditStore {
  private readonly db: Database.Database;
  private readonly appendTx: (entry: AuditEntry) => AuditRow & { reused: boolean };
  private readonly witnessTx: (row: AuditRow) => void;

  constructor(
    file: string,
    private readonly key: string,
    witness?: FileWitness,
  ) {
    // FULL: a record the tool answered after must survive a power cut.
    this.db = openSqlite(file, { synchronous: 'FULL' });
    this.db.exec(SCHEMA);
    const byRecord = this.db.prepare('SELECT seq, record_id, body, prev_hash, hash FROM audit WHERE record_id = ?');
    const head = this.db.prepare('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1');
    const hashAt = this.db.prepare('SELECT hash FROM audit WHERE seq = ?').pluck();
    const insert = this.db.prepare(
      'INSERT INTO audit (seq, record_id, kind, run_id, approval_id, key_scope, body, prev_hash, hash) VALUES (@seq, @record_id, @kind, @run_id, @approval_id, @key_scope, @body, @prev_hash, @hash)',
    );
    const lastSeq = () => (head.get() as { seq: number } | undefined)?.seq ?? 0;
    const checkWitness = () => {
      if (!witness) return;
      const seen = witness.read();
      witness.mustMatch(seen, lastSeq(), seen ? (hashAt.get(seen.seq) as string | undefined) : undefined);
    };
    const tx = this.db.transaction((entry: AuditEntry) => {
      checkWitness();
      const existing = byRecord.get(entry.record_id) as AuditRow | undefined;
      if (existing) return sameOrConflict(existing, entry);
      const row = nextRow(this.key, entry, head.get() as { seq: number; hash: string } | undefined);
      try {
        insert.run({ ...row, kind: entry.kind, run_id: entry.run_id, approval_id: entry.approval_id, key_scope: keyScope(entry) });
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && /key_scope/.test((err as Error).message)) throw new AuditKeyConflict();
        throw err;
      }
      return { ...row, reused: false };
    });
    // The chain's lock again, after the commit: the row is still there, the chain still the witness's, then the head moves.
    const moveWitness = this.db.transaction((row: AuditRow) => {
      checkWitness();
      if (hashAt.get(row.seq) !== row.hash) throw new AuditChainBroken(`record ${row.seq} is gone from the chain between its commit and its witness`);
      witness!.record(row);
    });
    this.appendTx = (entry) => tx.immediate(entry);
    this.witnessTx = (row) => {
      if (witness) moveWitness.immediate(row);
    };
  }

  /** A reused record moves a witness that lags it too: a retry after a crash between commit and witness catches it up. */
  async append(entry: AuditEntry): Promise<AuditRow & { reused: boolean }> {
    const row = this.appendTx(entry);
    this.witnessTx(row);
    return row;
  }

  async rows(after = 0, limit = 10_000): Promise<AuditRow[]> {
    return this.db.prepare('SELECT seq, record_id, kind, run_id, approval_id, key_scope, body, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq LIMIT ?').all(after, limit) as AuditRow[];
  }

  async rowsBefore(seq: number, limit: number): Promise<AuditRow[]> {
    return this.db.prepare('SELECT seq, record_id, body, prev_hash, hash FROM audit WHERE seq < ? ORDER BY seq DESC LIMIT ?').all(seq, limit) as AuditRow[];
  }

  async ofApproval(approvalId: string): Promise<AuditEntry[]> {
    const rows = this.db.prepare('SELECT body FROM audit WHERE approval_id = ? ORDER BY seq').all(approvalId) as { body: string }[];
    return rows.map((r) => JSON.parse(r.body) as AuditEntry);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
