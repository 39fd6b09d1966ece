import type Database from 'better-sqlite3';
import type { Pool } from 'pg';
import { ALL_GENERATIONS, revocationKey, type Revocation } from '../pure/revocations';
import { openSqlite } from './sqlite';

/**
 * Token revocations in the store every gateway replica and the worker
 * already share. A revocation is written here before the answer that makes
 * it true (the ack that ends an agent, the token of a relaunch, the
 * operator's revoke), and every replica reads it at each token check, so no
 * replica can accept a token in the moment between the two: the token
 * registry's copy (src/gateway/revocations.ts) reached replicas up to a
 * refresh later, and a call in that moment was accepted.
 *
 * Keys are those of the registry: `run` for a whole run, `run/agent` for
 * one agent; generations below `below` are refused.
 */
export interface RevokedTokens {
  /** Widens the key's entry (never narrows it), and drops entries recorded before `keepAfter` (ms since the epoch): their tokens have expired. */
  record(r: Revocation, keepAfter: number): Promise<void>;
  /** The lowest generation of (run, agent) still accepted: 0 when nothing is revoked. */
  below(runId: string, agentId: string): Promise<number>;
  close(): Promise<void>;
}

const belowOf = (r: Revocation) => r.belowGen ?? ALL_GENERATIONS;

/** One host: a table of the events file, read without a lock (write-ahead log), an indexed lookup of a few microseconds. */
export class SqliteRevokedTokens implements RevokedTokens {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly read: Database.Statement;

  constructor(file: string) {
    this.db = openSqlite(file);
    this.db.exec(`CREATE TABLE IF NOT EXISTS token_revocations (
      key TEXT PRIMARY KEY,
      below INTEGER NOT NULL,
      at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS token_revocations_by_at ON token_revocations (at)`);
    this.upsert = this.db.prepare(`INSERT INTO token_revocations (key, below, at) VALUES (?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET below = MAX(below, excluded.below), at = MAX(at, excluded.at)`);
    this.prune = this.db.prepare('DELETE FROM token_revocations WHERE at < ?');
    this.read = this.db.prepare('SELECT COALESCE(MAX(below), 0) AS below FROM token_revocations WHERE key IN (?, ?)');
  }

  async record(r: Revocation, keepAfter: number): Promise<void> {
    this.db.transaction(() => {
      this.upsert.run(revocationKey(r.runId, r.agentId), belowOf(r), r.at);
      this.prune.run(keepAfter);
    })();
  }

  async below(runId: string, agentId: string): Promise<number> {
    return (this.read.get(revocationKey(runId), revocationKey(runId, agentId)) as { below: number }).below;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

export const REVOKED_TOKENS_SCHEMA = `
CREATE TABLE IF NOT EXISTS dipper_token_revocations (
  key TEXT PRIMARY KEY,
  below BIGINT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS dipper_token_revocations_by_at ON dipper_token_revocations (at);
`;

/** Several hosts: one primary-key lookup per check, a round trip to the server. */
export class PgRevokedTokens implements RevokedTokens {
  constructor(private readonly pool: Pool) {}

  async record(r: Revocation, keepAfter: number): Promise<void> {
    // Old entries go first, in a statement of their own: one statement that both widened and deleted a row would do only one.
    await this.pool.query('DELETE FROM dipper_token_revocations WHERE at < $1', [keepAfter]);
    await this.pool.query(
      `INSERT INTO dipper_token_revocations AS t (key, below, at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET below = GREATEST(t.below, EXCLUDED.below), at = GREATEST(t.at, EXCLUDED.at)`,
      [revocationKey(r.runId, r.agentId), belowOf(r), r.at],
    );
  }

  async below(runId: string, agentId: string): Promise<number> {
    const { rows } = await this.pool.query('SELECT COALESCE(MAX(below), 0) AS below FROM dipper_token_revocations WHERE key = ANY($1::text[])', [
      [revocationKey(runId), revocationKey(runId, agentId)],
    ]);
    // BIGINT comes back as a string; ALL_GENERATIONS still fits a double exactly.
    return Number(rows[0].below);
  }

  async close(): Promise<void> {
    // The pool belongs to openPostgres, which ends it.
  }
}
