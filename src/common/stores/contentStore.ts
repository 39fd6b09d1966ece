import type Database from 'better-sqlite3';
import { openSqlite } from './sqlite';
import { randomUUID } from 'node:crypto';
import { isStored, readAs, type StoredText } from '../pure/content';

/** What a reader sees of text whose run's retention has passed. */
export const CONTENT_GONE = '[content no longer kept: its run ended and the retention period passed]';

/**
 * Large text (message bodies, review details) kept outside workflow state.
 * A gateway writes it before the Update that refers to it; workflows hold
 * only `{content_ref, bytes}`; readers swap references back for text. Each
 * piece belongs to a run and goes some time after its run ended.
 *
 * SQLite on one host today, beside the event log; a shared database can
 * stand behind the same methods when gateways and workers spread out.
 * Content goes with its run (src/worker/contentSweeper.ts).
 */
export interface ContentStore {
  put(runId: string, text: string): Promise<StoredText>;
  /** The texts of the refs that exist; a ref that is gone (swept, or never written) is absent from the map. */
  get(refs: Iterable<string>): Promise<Map<string, string>>;
  /** Content no Update refers to (the one that would have was refused). */
  drop(refs: Iterable<string>): Promise<void>;
  /** Runs that have content: what a sweep looks at. */
  runs(): Promise<string[]>;
  /** Deletes every piece of a run's content; returns how many went. */
  dropRun(runId: string): Promise<number>;
  /** Pieces and bytes kept for a run (for tests and the operator). */
  usage(runId: string): Promise<{ pieces: number; bytes: number }>;
  close(): Promise<void>;
}

/** A copy of `value` (a Query's answer, an event, a launch spec) with every stored text replaced by its words. */
export async function resolveTexts<T>(store: ContentStore, value: T): Promise<T> {
  const refs: string[] = [];
  collect(value, refs);
  if (refs.length === 0) return value;
  return replace(value, await store.get(refs)) as T;
}

/** A ref for a new piece of content. */
export function newContentRef(): string {
  return `ct_${randomUUID().replace(/-/g, '')}`;
}

export class SqliteContentStore implements ContentStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly select: Database.Statement;

  constructor(file: string) {
    // synchronous NORMAL: a write lost to a power cut whose Update never ran costs nothing; one whose Update ran is lost
    // with it only if the OS lost its page cache too. It keeps a put off the disk's flush path.
    this.db = openSqlite(file, { synchronous: 'NORMAL' });
    this.db.exec(`CREATE TABLE IF NOT EXISTS content (
      ref TEXT PRIMARY KEY,
      run_id TEXT NOT NULL,
      bytes INTEGER NOT NULL,
      text TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS content_by_run ON content (run_id, created_at);`);
    this.insert = this.db.prepare('INSERT INTO content (ref, run_id, bytes, text, created_at) VALUES (?, ?, ?, ?, ?)');
    this.select = this.db.prepare('SELECT ref, text FROM content WHERE ref = ?');
  }

  async put(runId: string, text: string): Promise<StoredText> {
    const ref = newContentRef();
    const bytes = Buffer.byteLength(text);
    this.insert.run(ref, runId, bytes, text, Date.now());
    return { content_ref: ref, bytes };
  }

  async get(refs: Iterable<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const ref of new Set(refs)) {
      const row = this.select.get(ref) as { ref: string; text: string } | undefined;
      if (row) out.set(row.ref, row.text);
    }
    return out;
  }

  async drop(refs: Iterable<string>): Promise<void> {
    const del = this.db.prepare('DELETE FROM content WHERE ref = ?');
    this.db.transaction((all: string[]) => all.forEach((r) => del.run(r)))([...refs]);
  }

  async runs(): Promise<string[]> {
    return (this.db.prepare('SELECT DISTINCT run_id FROM content').all() as { run_id: string }[]).map((r) => r.run_id);
  }

  async dropRun(runId: string): Promise<number> {
    return this.db.prepare('DELETE FROM content WHERE run_id = ?').run(runId).changes;
  }

  async usage(runId: string): Promise<{ pieces: number; bytes: number }> {
    const row = this.db.prepare('SELECT COUNT(*) AS pieces, COALESCE(SUM(bytes), 0) AS bytes FROM content WHERE run_id = ?').get(runId) as {
      pieces: number;
      bytes: number;
    };
    return row;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

function collect(value: unknown, into: string[]): void {
  if (isStored(value)) {
    into.push(value.content_ref);
    return;
  }
  if (Array.isArray(value)) for (const v of value) collect(v, into);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collect(v, into);
}

function replace(value: unknown, texts: Map<string, string>): unknown {
  if (isStored(value)) {
    const text = texts.get(value.content_ref);
    return text === undefined ? CONTENT_GONE : readAs(value as StoredText, text);
  }
  if (Array.isArray(value)) return value.map((v) => replace(v, texts));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v, texts)]));
  }
  return value;
}
