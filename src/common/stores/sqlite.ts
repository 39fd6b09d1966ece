import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A SQLite file shared by the processes of one host (gateway and worker):
 * write-ahead log so readers never wait on a writer, and a writer waits up
 * to 5 s for another's lock instead of failing.
 */
export function openSqlite(file: string, opts: { synchronous?: 'NORMAL' | 'FULL' } = {}): Database.Database {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  if (opts.synchronous) db.pragma(`synchronous = ${opts.synchronous}`);
  db.pragma('busy_timeout = 5000');
  return db;
}
