import type Database from 'better-sqlite3';

/**
 * The service's tables, one entry per schema version; `user_version` says how
 * many have been applied. Only ever append: a database that ran version n
 * must reach n+1 by running entry n alone.
 */
const MIGRATIONS: string[] = [
  `
  CREATE TABLE workspaces (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE agents (
    workspace TEXT NOT NULL, id TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, id)
  ) WITHOUT ROWID;
  -- next_number is the board's counter: numbers are never handed out twice, even after a delete.
  CREATE TABLE channels (
    workspace TEXT NOT NULL, name TEXT NOT NULL, next_number INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, name)
  ) WITHOUT ROWID;
  CREATE TABLE memberships (
    workspace TEXT NOT NULL, agent TEXT NOT NULL, channel TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, agent, channel)
  ) WITHOUT ROWID;
  -- Only SHA-256 hashes: a copy of this file grants nothing.
  CREATE TABLE tokens (
    hash TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    workspace TEXT NOT NULL, agent TEXT NOT NULL, expires_at INTEGER NOT NULL, access_ttl_seconds INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX tokens_by_expiry ON tokens (expires_at);
  -- A deleted task keeps its row as the tombstone (deleted_at set); *_fold are lower-cased copies for search.
  CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    scope_id TEXT NOT NULL UNIQUE,
    workspace TEXT NOT NULL, channel TEXT NOT NULL, number INTEGER NOT NULL, parent_number INTEGER,
    title TEXT NOT NULL, description TEXT NOT NULL, title_fold TEXT NOT NULL, description_fold TEXT NOT NULL,
    status TEXT NOT NULL, priority TEXT NOT NULL, assignee TEXT, creator TEXT NOT NULL,
    labels TEXT NOT NULL, checklist TEXT NOT NULL, urls TEXT NOT NULL, messages TEXT NOT NULL,
    workspaces TEXT NOT NULL, attachments TEXT NOT NULL,
    blocker TEXT, thread TEXT,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, deleted_at INTEGER, deleted_by TEXT,
    UNIQUE (workspace, channel, number)
  );
  CREATE INDEX tasks_by_parent ON tasks (workspace, channel, parent_number);
  CREATE TABLE checkpoints (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, task_id INTEGER NOT NULL REFERENCES tasks (id),
    summary TEXT NOT NULL, author TEXT NOT NULL, created_at INTEGER NOT NULL
  );
  CREATE INDEX checkpoints_by_task ON checkpoints (task_id, seq);
  CREATE TABLE receipts (
    workspace TEXT NOT NULL, agent TEXT NOT NULL, run_id TEXT NOT NULL, tool TEXT NOT NULL, key TEXT NOT NULL,
    digest TEXT NOT NULL, answer TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, agent, run_id, tool, key)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, workspace TEXT NOT NULL, type TEXT NOT NULL,
    channel TEXT NOT NULL, number INTEGER NOT NULL, agent TEXT NOT NULL, at INTEGER NOT NULL
  );
  CREATE INDEX events_by_workspace ON events (workspace, seq);
  `,
];

/** Read and applied under one write lock, so two processes opening a new file do not both migrate it. */
export function migrate(db: Database.Database): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`task service database is at schema version ${version}, newer than this code (${MIGRATIONS.length})`);
    }
    for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
