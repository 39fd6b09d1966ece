import type Database from 'better-sqlite3';
import { openSqlite } from './sqlite';
import type { DipperEvent } from '../../../workflows/types';

export interface StoredEvent extends DipperEvent {
  /** Position in the log; the cursor for listing. */
  seq: number;
}

export interface ListOptions {
  after?: number;
  limit?: number;
  type?: string;
}

/**
 * The append-only event log. Workflows hand events to an activity, and an
 * activity may run twice, so each event carries an id minted in the
 * workflow and a repeat is ignored: the log records every event once.
 * SQLite on one host (below); PostgreSQL when Dipper spans hosts
 * (postgres.ts).
 */
export interface EventStore {
  append(events: DipperEvent[]): Promise<void>;
  list(runId: string, opts?: ListOptions): Promise<StoredEvent[]>;
  /** Events of one type across every run, in log order (the audit chain's anchors). */
  ofType(type: string, after?: number, limit?: number): Promise<StoredEvent[]>;
  close(): Promise<void>;
}

export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;

  constructor(file: string) {
    this.db = openSqlite(file);
    this.db.exec(`CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      event_id TEXT NOT NULL UNIQUE,
      run_id TEXT NOT NULL,
      agent_id TEXT,
      type TEXT NOT NULL,
      ts INTEGER NOT NULL,
      data TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS events_by_run ON events (run_id, seq);
    CREATE INDEX IF NOT EXISTS events_by_type ON events (type, seq);`);
    this.insert = this.db.prepare(
      'INSERT OR IGNORE INTO events (event_id, run_id, agent_id, type, ts, data) VALUES (@event_id, @run_id, @agent_id, @type, @ts, @data)',
    );
  }

  async append(events: DipperEvent[]): Promise<void> {
    const tx = this.db.transaction((batch: DipperEvent[]) => {
      for (const e of batch) this.insert.run({ ...e, data: JSON.stringify(e.data) });
    });
    tx(events);
  }

  async list(runId: string, opts: ListOptions = {}): Promise<StoredEvent[]> {
    const rows = this.db
      .prepare(
        `SELECT seq, event_id, run_id, agent_id, type, ts, data FROM events
         WHERE run_id = ? AND seq > ? ${opts.type ? 'AND type = ?' : ''} ORDER BY seq LIMIT ?`,
      )
      .all(...[runId, opts.after ?? 0, ...(opts.type ? [opts.type] : []), opts.limit ?? 1000]) as (Omit<StoredEvent, 'data'> & {
      data: string;
    })[];
    return rows.map((r) => ({ ...r, data: JSON.parse(r.data) }));
  }

  async ofType(type: string, after = 0, limit = 1000): Promise<StoredEvent[]> {
    const rows = this.db
      .prepare('SELECT seq, event_id, run_id, agent_id, type, ts, data FROM events WHERE type = ? AND seq > ? ORDER BY seq LIMIT ?')
      .all(type, after, limit) as (Omit<StoredEvent, 'data'> & { data: string })[];
    return rows.map((r) => ({ ...r, data: JSON.parse(r.data) }));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
