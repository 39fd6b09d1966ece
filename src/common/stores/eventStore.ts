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
/** One agent's model requests through the proxy, and the tokens their answers reported. */
export interface AgentUsage {
  agent_id: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
}

export interface EventStore {
  append(events: DipperEvent[]): Promise<void>;
  list(runId: string, opts?: ListOptions): Promise<StoredEvent[]>;
  /** Events of one type across every run, in log order (the audit chain's anchors). */
  ofType(type: string, after?: number, limit?: number): Promise<StoredEvent[]>;
  /** The run an iSphere approval belongs to, from its `isphere.approval_requested` event; null when none is written. */
  runOfApproval(approvalId: string): Promise<string | null>;
  /** What the run's model answers cost, per agent: its `model.usage` events added up by the store. */
  modelUsage(runId: string): Promise<AgentUsage[]>;
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
    CREATE INDEX IF NOT EXISTS events_by_type ON events (type, seq);
    CREATE INDEX IF NOT EXISTS events_by_run_type ON events (run_id, type);`);
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

  async runOfApproval(approvalId: string): Promise<string | null> {
    const row = this.db
      .prepare(`SELECT run_id FROM events WHERE type = 'isphere.approval_requested' AND json_extract(data, '$.approval_id') = ? LIMIT 1`)
      .get(approvalId) as { run_id: string } | undefined;
    return row?.run_id ?? null;
  }

  async modelUsage(runId: string): Promise<AgentUsage[]> {
    return this.db
      .prepare(
        `SELECT agent_id, COUNT(*) AS requests, COALESCE(SUM(json_extract(data, '$.input_tokens')), 0) AS input_tokens,
                COALESCE(SUM(json_extract(data, '$.output_tokens')), 0) AS output_tokens
         FROM events WHERE run_id = ? AND type = 'model.usage' GROUP BY agent_id ORDER BY agent_id`,
      )
      .all(runId) as AgentUsage[];
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
