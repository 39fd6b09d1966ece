import type Database from 'better-sqlite3';

/** The database, the clock, and a cache of prepared statements shared by every operation. */
export interface Store {
  readonly db: Database.Database;
  now(): number;
  /** A statement is compiled once per SQL text; list queries build a handful of variants, never unbounded ones. */
  sql(text: string): Database.Statement;
}

/** Who calls: the (workspace, agent) its token is bound to. */
export interface Caller {
  workspace: string;
  agent: string;
}

export function createStore(db: Database.Database, now: () => number = Date.now): Store {
  const statements = new Map<string, Database.Statement>();
  return {
    db,
    now,
    sql(text) {
      let stmt = statements.get(text);
      if (!stmt) {
        stmt = db.prepare(text);
        statements.set(text, stmt);
      }
      return stmt;
    },
  };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
