import type Database from 'better-sqlite3';
import { openSqlite } from './sqlite';

/** One record of the event log; written to the store by an activity, never read back by workflows. */
export interface DipperEvent {
  event_id: string;
  run_id: string;
  agent_id: string | null;
  type: string;
  /** Milliseconds since the epoch, workflow time. */
  ts: number;
  data: Record<string, unknown>;
}

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

/** A model request the proxy forwards: its claim on the budgets until its answer is counted. */
export interface ModelClaim {
  claim_id: string;
  run_id: string;
  agent_id: string;
  /** The most tokens its answer can report (src/gateway/modelProxy.ts). */
  tokens: number;
  at: number;
}

/** One agent's model requests in flight, and the tokens they may use at most. */
export interface HeldUsage {
  agent_id: string;
  requests: number;
  tokens: number;
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
  /**
   * One step no other gateway replica can interleave with another's for the
   * same run: reads the run's usage and its claims in flight (claims made
   * before `lapseBefore` no longer count: their gateway died before it
   * settled them), then records `claim` unless `refuse` returns a refusal.
   */
  claimModelUse<R>(claim: ModelClaim, lapseBefore: number, refuse: (used: AgentUsage[], held: HeldUsage[]) => R | null): Promise<R | null>;
  /** Ends a claim and records its answer's `model.usage` event (null: the request was not answered) in one step, so no reader sees both or neither. */
  settleModelUse(claimId: string, usage: DipperEvent | null): Promise<void>;
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
    CREATE INDEX IF NOT EXISTS events_by_run_type ON events (run_id, type);
    CREATE TABLE IF NOT EXISTS model_claims (
      claim_id TEXT PRIMARY KEY,
      run_id TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      tokens INTEGER NOT NULL,
      at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS model_claims_by_run ON model_claims (run_id, at);`);
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
    return this.usageOf(runId);
  }

  private usageOf(runId: string): AgentUsage[] {
    return this.db
      .prepare(
        `SELECT agent_id, COUNT(*) AS requests, COALESCE(SUM(json_extract(data, '$.input_tokens')), 0) AS input_tokens,
                COALESCE(SUM(json_extract(data, '$.output_tokens')), 0) AS output_tokens
         FROM events WHERE run_id = ? AND type = 'model.usage' GROUP BY agent_id ORDER BY agent_id`,
      )
      .all(runId) as AgentUsage[];
  }

  async claimModelUse<R>(claim: ModelClaim, lapseBefore: number, refuse: (used: AgentUsage[], held: HeldUsage[]) => R | null): Promise<R | null> {
    // IMMEDIATE: the write lock is taken before the reads, so another process's claim waits for this one to commit.
    const step = this.db.transaction(() => {
      this.db.prepare('DELETE FROM model_claims WHERE run_id = ? AND at < ?').run(claim.run_id, lapseBefore);
      const held = this.db
        .prepare('SELECT agent_id, COUNT(*) AS requests, SUM(tokens) AS tokens FROM model_claims WHERE run_id = ? GROUP BY agent_id ORDER BY agent_id')
        .all(claim.run_id) as HeldUsage[];
      const refusal = refuse(this.usageOf(claim.run_id), held);
      if (refusal === null) this.db.prepare('INSERT INTO model_claims (claim_id, run_id, agent_id, tokens, at) VALUES (@claim_id, @run_id, @agent_id, @tokens, @at)').run(claim);
      return refusal;
    });
    return step.immediate();
  }

  async settleModelUse(claimId: string, usage: DipperEvent | null): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM model_claims WHERE claim_id = ?').run(claimId);
      if (usage) this.insert.run({ ...usage, data: JSON.stringify(usage.data) });
    })();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
