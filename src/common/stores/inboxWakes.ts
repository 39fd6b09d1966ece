import type Database from 'better-sqlite3';
import { openSqlite } from './sqlite';

/**
 * Word that an agent's inbox changed, passed between processes so a long
 * poll held by any gateway replica looks again at once instead of asking
 * Temporal on a timer. Keys are `<run>/<agent>`. Only a hint: a lost wake
 * delays an item until the poll's window ends and the next poll asks.
 *
 * `origin` names the publishing process, so a gateway can skip the echo of
 * a wake it already passed on inside itself.
 */
export interface InboxWakes {
  /** Publishing never holds the caller's thread (a server round trip, not a lock on a shared file). */
  readonly nonBlocking: boolean;
  publish(origin: string, keys: string[]): Promise<void>;
  /** Calls onWake for every wake published from now on by another origin; returns the way to stop. */
  listen(origin: string, onWake: (key: string) => void): Promise<() => Promise<void>>;
}

/** How often a listener reads the table; a wake crosses processes in about this much time. */
const READ_EVERY_MS = 100;
/** Wakes are read within a moment; older rows are only clutter. */
const KEEP_MS = 60_000;

/**
 * Wakes on one host: rows in a table of the events file that every
 * gateway process reads a few times a second (one indexed read for all
 * the polls it holds, however many).
 */
export class SqliteInboxWakes implements InboxWakes {
  readonly nonBlocking = false;
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private published = 0;

  constructor(file: string) {
    this.db = openSqlite(file);
    this.db.exec(`CREATE TABLE IF NOT EXISTS inbox_wakes (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      origin TEXT NOT NULL,
      key TEXT NOT NULL,
      ts INTEGER NOT NULL
    )`);
    this.insert = this.db.prepare('INSERT INTO inbox_wakes (origin, key, ts) VALUES (?, ?, ?)');
  }

  async publish(origin: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const now = Date.now();
    this.db.transaction(() => {
      for (const key of keys) this.insert.run(origin, key, now);
    })();
    if (++this.published % 200 === 0) this.db.prepare('DELETE FROM inbox_wakes WHERE ts < ?').run(now - KEEP_MS);
  }

  async listen(origin: string, onWake: (key: string) => void): Promise<() => Promise<void>> {
    let after = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM inbox_wakes').get() as { seq: number }).seq;
    const read = this.db.prepare('SELECT seq, origin, key FROM inbox_wakes WHERE seq > ? ORDER BY seq LIMIT 5000');
    const timer = setInterval(() => {
      try {
        for (const row of read.all(after) as { seq: number; origin: string; key: string }[]) {
          after = row.seq;
          if (row.origin !== origin) onWake(row.key);
        }
      } catch {
        // A busy or closing file: the next read catches up, and polls time out meanwhile.
      }
    }, READ_EVERY_MS);
    timer.unref();
    return async () => clearInterval(timer);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
