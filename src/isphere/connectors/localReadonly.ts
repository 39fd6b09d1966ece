import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { ConnectorError } from '../../common/isphere/errors';
import { STORE_FORMAT, STORE_VERSION } from '../localStore/schema';
import { contactRecord, fileRecord, groupRecord, messageRecord } from './records';
import type {
  Capability,
  ContactRecord,
  ContactSearch,
  Connector,
  ConversationRecord,
  ConversationSearch,
  FileList,
  FileRecord,
  GroupRecord,
  GroupSearch,
  MessageRead,
  MessageRecord,
  Page,
} from './types';

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
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(['search_contacts', 'search_groups', 'find_conversations', 'read_messages', 'list_files']);
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

  async findConversations(q: ConversationSearch): Promise<Page<ConversationRecord>> {
    const rows = this.query(
      `SELECT conversation_id, conversation_type, display_name, peer_id FROM conversations
       WHERE instr(lower(display_name), @needle) > 0 ${q.conversation_type ? 'AND conversation_type = @type' : ''}
       ORDER BY display_name, conversation_id LIMIT @take`,
      { needle: q.query.trim().toLowerCase(), type: q.conversation_type ?? null, take: Math.min(q.limit, 200) },
    );
    return { items: rows.map(conversationOf), next_cursor: null };
  }

  async conversation(id: string): Promise<ConversationRecord> {
    const [row] = this.query('SELECT conversation_id, conversation_type, display_name, peer_id FROM conversations WHERE conversation_id = @id', { id });
    if (!row) throw new ConnectorError('TARGET_NOT_FOUND', `No conversation ${id} in the local store.`, false);
    return conversationOf(row);
  }

  /** Newest first, `since` inclusive; the cursor holds the last message's (created_at, id), bound to the conversation and `since`. */
  async readMessages(q: MessageRead): Promise<Page<MessageRecord>> {
    await this.conversation(q.conversation_id);
    const scope = { query: q.conversation_id, since: q.since ?? null };
    const after = q.cursor === undefined ? undefined : readCursor(q.cursor, 'messages', scope);
    const rows = this.query(
      `SELECT * FROM messages WHERE conversation_id = @conv ${q.since ? 'AND created_at >= @since' : ''}
       ${after ? 'AND (created_at < @at OR (created_at = @at AND message_id < @id))' : ''}
       ORDER BY created_at DESC, message_id DESC LIMIT @take`,
      { conv: q.conversation_id, since: q.since ?? null, take: q.limit + 1, ...(after ? { at: after[0], id: after[1] } : {}) },
    );
    const shown = rows.slice(0, q.limit);
    const files = this.attachmentsOf(shown.map((r) => String(r.message_id)));
    const items = shown.map((r) =>
      messageRecord(
        {
          message_id: String(r.message_id),
          sender_id: text(r.sender_id),
          sender_name: text(r.sender_name),
          content_type: String(r.content_type),
          content_text: String(r.content_text),
          attachments: (files.get(String(r.message_id)) ?? []).map((a) => ({ file_id: String(a.file_id), file_name: String(a.file_name), size_bytes: a.size_bytes === null ? null : Number(a.size_bytes) })),
          created_at: text(r.created_at),
          received_at: text(r.received_at),
          raw_ref: String(r.raw_ref),
        },
        this.name,
        false,
      ),
    );
    const last = shown.at(-1);
    return { items, next_cursor: rows.length > q.limit && last ? writeCursor('messages', scope, [String(last.created_at), String(last.message_id)]) : null };
  }

  async listFiles(q: FileList): Promise<Page<FileRecord>> {
    if (q.conversation_id !== undefined) await this.conversation(q.conversation_id);
    const scope = { query: `${q.conversation_id ?? ''}/${q.message_id ?? ''}` };
    const after = q.cursor === undefined ? undefined : readCursor(q.cursor, 'files', scope);
    const rows = this.query(
      `SELECT a.*, m.conversation_id, m.created_at FROM attachments a JOIN messages m ON m.message_id = a.message_id
       WHERE 1 = 1 ${q.conversation_id ? 'AND m.conversation_id = @conv' : ''} ${q.message_id ? 'AND a.message_id = @msg' : ''}
       ${after ? 'AND (m.created_at < @at OR (m.created_at = @at AND a.file_id < @id))' : ''}
       ORDER BY m.created_at DESC, a.file_id DESC LIMIT @take`,
      { conv: q.conversation_id ?? null, msg: q.message_id ?? null, take: q.limit + 1, ...(after ? { at: after[0], id: after[1] } : {}) },
    );
    if (q.message_id !== undefined && rows.length === 0 && after === undefined) {
      const [known] = this.query('SELECT message_id FROM messages WHERE message_id = @id', { id: q.message_id });
      if (!known) throw new ConnectorError('TARGET_NOT_FOUND', `No message ${q.message_id} in the local store.`, false);
    }
    const shown = rows.slice(0, q.limit);
    const items = shown.map((r) =>
      fileRecord(
        {
          file_id: String(r.file_id),
          message_id: text(r.message_id),
          conversation_id: text(r.conversation_id),
          file_name: String(r.file_name),
          size_bytes: r.size_bytes === null ? null : Number(r.size_bytes),
          mime_type: text(r.mime_type),
          created_at: text(r.created_at),
          sha256: text(r.sha256),
        },
        this.name,
        false,
      ),
    );
    const last = shown.at(-1);
    return { items, next_cursor: rows.length > q.limit && last ? writeCursor('files', scope, [String(last.created_at), String(last.file_id)]) : null };
  }

  private attachmentsOf(messageIds: string[]): Map<string, Row[]> {
    const out = new Map<string, Row[]>();
    if (messageIds.length === 0) return out;
    const rows = this.query(`SELECT * FROM attachments WHERE message_id IN (${messageIds.map((_, i) => `@m${i}`).join(', ')}) ORDER BY file_id`, Object.fromEntries(messageIds.map((id, i) => [`m${i}`, id])));
    for (const r of rows) out.set(String(r.message_id), [...(out.get(String(r.message_id)) ?? []), r]);
    return out;
  }

  /** A query on the store; an export without the table (made before it existed) cannot answer this call. */
  private query(sql: string, params: Record<string, unknown>): Row[] {
    try {
      return this.open().prepare(sql).all(params) as Row[];
    } catch (err) {
      if (err instanceof ConnectorError) throw err;
      if (/no such table/.test((err as Error).message)) throw unavailable('The local iSphere store has no messages or files in it.');
      throw err;
    }
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

const conversationOf = (r: Row): ConversationRecord => ({
  conversation_id: String(r.conversation_id),
  conversation_type: String(r.conversation_type) as ConversationRecord['conversation_type'],
  display_name: String(r.display_name),
  peer_id: text(r.peer_id),
});
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
