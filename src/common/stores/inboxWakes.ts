import dgram from 'node:dgram';
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

/** The origin of wakes that workers' activities publish (for workflows); gateways skip only their own origin's. */
export const WORKER_WAKES = 'worker';

/**
 * How often a listener reads the table without being poked: only a
 * backstop for a poke that was lost, so it costs little while idle.
 */
const BACKSTOP_MS = 1_000;
/** Wakes are read within a moment; older rows are only clutter. */
const KEEP_MS = 60_000;
/** A listener says it is alive this often; one silent for three times as long is not poked. */
const ALIVE_EVERY_MS = 10_000;

/**
 * Wakes on one host: rows in a table of the events file, and a poke. Each
 * listening gateway binds a UDP port on the loopback and names it in the
 * table; a publisher writes its rows, then sends every live listener an
 * empty datagram, and the listener reads the rows at once (one indexed
 * read for all the polls it holds). A poke carries nothing and only says
 * "read now", so one lost or forged costs a read; the backstop read finds
 * rows whose poke never came.
 */
export class SqliteInboxWakes implements InboxWakes {
  readonly nonBlocking = false;
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly listeners: Database.Statement;
  private sender: dgram.Socket | undefined;
  private published = 0;

  constructor(
    file: string,
    private readonly backstopMs = BACKSTOP_MS,
  ) {
    this.db = openSqlite(file);
    this.db.exec(`CREATE TABLE IF NOT EXISTS inbox_wakes (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      origin TEXT NOT NULL,
      key TEXT NOT NULL,
      ts INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS inbox_wake_listeners (
      origin TEXT PRIMARY KEY,
      port INTEGER NOT NULL,
      seen INTEGER NOT NULL
    )`);
    this.insert = this.db.prepare('INSERT INTO inbox_wakes (origin, key, ts) VALUES (?, ?, ?)');
    this.listeners = this.db.prepare('SELECT port FROM inbox_wake_listeners WHERE origin != ? AND seen > ?');
  }

  async publish(origin: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const now = Date.now();
    this.db.transaction(() => {
      for (const key of keys) this.insert.run(origin, key, now);
    })();
    if (++this.published % 200 === 0) this.db.prepare('DELETE FROM inbox_wakes WHERE ts < ?').run(now - KEEP_MS);
    this.poke(origin, now);
  }

  /** Tells every live listener but the publisher to read now. Best effort: the backstop read covers a lost poke. */
  private poke(origin: string, now: number): void {
    const ports = (this.listeners.all(origin, now - 3 * ALIVE_EVERY_MS) as { port: number }[]).map((r) => r.port);
    if (ports.length === 0) return;
    if (!this.sender) {
      this.sender = dgram.createSocket('udp4');
      this.sender.on('error', () => undefined);
      this.sender.unref();
    }
    for (const port of ports) this.sender.send(EMPTY, port, '127.0.0.1', () => undefined);
  }

  async listen(origin: string, onWake: (key: string) => void): Promise<() => Promise<void>> {
    let after = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM inbox_wakes').get() as { seq: number }).seq;
    const read = this.db.prepare('SELECT seq, origin, key FROM inbox_wakes WHERE seq > ? ORDER BY seq LIMIT 5000');
    const readNow = () => {
      try {
        for (const row of read.all(after) as { seq: number; origin: string; key: string }[]) {
          after = row.seq;
          if (row.origin !== origin) onWake(row.key);
        }
      } catch {
        // A busy or closing file: the next read catches up, and polls time out meanwhile.
      }
    };
    // Pokes that come together are read together: one read per turn of the event loop.
    let due = false;
    const socket = dgram.createSocket('udp4');
    socket.on('error', () => undefined);
    socket.on('message', () => {
      if (due) return;
      due = true;
      setImmediate(() => {
        due = false;
        readNow();
      });
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    socket.unref();
    const port = socket.address().port;
    const alive = () => {
      try {
        const now = Date.now();
        this.db.prepare('INSERT OR REPLACE INTO inbox_wake_listeners (origin, port, seen) VALUES (?, ?, ?)').run(origin, port, now);
        // Gateways that died without a word leave a row each; an hour on, nobody misses them.
        this.db.prepare('DELETE FROM inbox_wake_listeners WHERE seen < ?').run(now - 3_600_000);
      } catch {
        // Tried again at the next beat; meanwhile the backstop read hears every wake.
      }
    };
    alive();
    const backstop = setInterval(readNow, this.backstopMs);
    backstop.unref();
    const beat = setInterval(alive, ALIVE_EVERY_MS);
    beat.unref();
    return async () => {
      clearInterval(backstop);
      clearInterval(beat);
      socket.close();
      try {
        this.db.prepare('DELETE FROM inbox_wake_listeners WHERE origin = ?').run(origin);
      } catch {
        // Its row stops being poked once it is silent.
      }
    };
  }

  async close(): Promise<void> {
    this.sender?.close();
    this.sender = undefined;
    this.db.close();
  }
}

const EMPTY = Buffer.alloc(0);
