import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { ConnectorError } from '../../../activities/isphere/errors';
import { STORE_FORMAT, STORE_VERSION } from '../localStore/schema';
import { contactRecord, groupRecord } from './records';
import type { Capability, ContactRecord, ContactSearch, Connector, GroupRecord, GroupSearch, Page } from './types';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

interface Row {
  [column: string]: string | number | null;
}

/**
 * Reads a plaintext SQLite export of the client's data
 * (docs/isphere-local-store.md), opened read-only with writes refused at
 * the connection. A file that is missing, not plain SQLite (an encrypted
 * database: Dipper never decrypts) or of another format or version is
 * SOURCE_UNAVAILABLE. It never touches a client process.
 */
export class LocalReadonlyConnector implements Connector {
  readonly name = 'local_readonly' as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(['search_contacts', 'search_groups']);
  private db: Database.Database | undefined;

  constructor(private readonly file: string) {}

  async searchContacts(q: ContactSearch): Promise<Page<ContactRecord>> {
    const rows = this.search('contacts', 'contact_id', q, q.include_inactive ? '' : 'AND active = 1', ['display_name', 'account', 'department', 'title']);
    return this.paged(rows, q, 'contacts', 'contact_id', (r) =>
      contactRecord(
        { contact_id: String(r.contact_id), display_name: String(r.display_name), account: text(r.account), department: text(r.department), title: text(r.title), raw_ref: String(r.raw_ref) },
        this.name,
        q.query,
      ),
    );
  }

  async searchGroups(q: GroupSearch): Promise<Page<GroupRecord>> {
    const rows = this.search('groups', 'group_id', q, q.include_archived ? '' : 'AND archived = 0', ['display_name']);
    return this.paged(rows, q, 'groups', 'group_id', (r) =>
      groupRecord(
        {
          group_id: String(r.group_id),
          display_name: String(r.display_name),
          member_count: r.member_count === null ? null : Number(r.member_count),
          owner_ref: text(r.owner_ref),
          raw_ref: String(r.raw_ref),
        },
        this.name,
        q.query,
      ),
    );
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
  }

  /** One page more than asked, after the cursor's row, in (display_name, id) order. */
  private search(table: 'contacts' | 'groups', idColumn: string, q: { query: string; limit: number; cursor?: string }, filter: string, fields: string[]): Row[] {
    const after = q.cursor === undefined ? undefined : readCursor(q.cursor, table, q);
    const needle = q.query.trim().toLowerCase();
    const match = fields.map((f) => `instr(lower(coalesce(${f}, '')), @needle) > 0`).join(' OR ');
    const sql =
      `SELECT * FROM ${table} WHERE (${match}) ${filter} ` +
      (after ? `AND (display_name > @name OR (display_name = @name AND ${idColumn} > @id)) ` : '') +
      `ORDER BY display_name, ${idColumn} LIMIT @take`;
    return this.open()
      .prepare(sql)
      .all({ needle, take: q.limit + 1, ...(after ? { name: after[0], id: after[1] } : {}) }) as Row[];
  }

  private paged<T>(rows: Row[], q: { query: string; limit: number }, table: 'contacts' | 'groups', idColumn: string, map: (r: Row) => T): Page<T> {
    const more = rows.length > q.limit;
    const shown = rows.slice(0, q.limit);
    const last = shown.at(-1);
    return { items: shown.map(map), next_cursor: more && last ? writeCursor(table, q, [String(last.display_name), String(last[idColumn])]) : null };
  }

  private open(): Database.Database {
    if (this.db) return this.db;
    let header: Buffer;
    try {
      const fd = fs.openSync(this.file, 'r');
      try {
        header = Buffer.alloc(SQLITE_HEADER.length);
        fs.readSync(fd, header, 0, header.length, 0);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      throw unavailable('The local iSphere store is not there.');
    }
    if (!header.equals(SQLITE_HEADER)) throw unavailable('The local iSphere store is not a plain SQLite export (Dipper never decrypts a store).');
    const db = new Database(this.file, { readonly: true, fileMustExist: true });
    try {
      db.pragma('query_only = ON');
      const meta = new Map((db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
      if (meta.get('format') !== STORE_FORMAT || meta.get('version') !== STORE_VERSION) {
        throw unavailable(`The local iSphere store is not a ${STORE_FORMAT} version ${STORE_VERSION} file.`);
      }
    } catch (err) {
      db.close();
      throw err instanceof ConnectorError ? err : unavailable('The local iSphere store could not be read.');
    }
    this.db = db;
    return db;
  }
}

const text = (v: string | number | null | undefined): string | null => (v === null || v === undefined ? null : String(v));
const unavailable = (message: string) => new ConnectorError('SOURCE_UNAVAILABLE', message, false);

/** Cursors are bound to their list and query: one from another search is refused, never misread. */
function queryDigest(table: string, q: { query: string; limit?: number } & Record<string, unknown>): string {
  const scope = [table, q.query.trim().toLowerCase(), q.include_inactive ?? q.include_archived ?? false];
  return createHash('sha256').update(JSON.stringify(scope)).digest('base64url').slice(0, 16);
}

function writeCursor(table: string, q: { query: string } & Record<string, unknown>, after: [string, string]): string {
  return Buffer.from(JSON.stringify({ q: queryDigest(table, q), a: after })).toString('base64url');
}

function readCursor(cursor: string, table: string, q: { query: string } & Record<string, unknown>): [string, string] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { q?: unknown; a?: unknown };
    if (parsed.q === queryDigest(table, q) && Array.isArray(parsed.a) && parsed.a.length === 2 && parsed.a.every((x) => typeof x === 'string')) {
      return parsed.a as [string, string];
    }
  } catch {
    // falls through to the refusal
  }
  throw new ConnectorError('INVALID_ARGUMENT', 'The cursor does not belong to this search; start again without it.', false, { field: 'cursor' });
}
