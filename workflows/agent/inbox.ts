import { stateBytes, textBytes, type Text } from '../../src/common/pure/content';
import type { InboxItem, InboxKind, InboxNews } from '../types';

export interface InboxData {
  items: InboxItem[];
  next_seq: number;
  acked_through: number;
  /** Recently accepted message ids, so a retried delivery is not queued twice. */
  recent_ids: string[];
  /** Of those, the ones a sender's idempotency key named, with their content's fingerprint: a key reused for other words is refused. */
  keyed?: Record<string, string>;
  /** Bytes pending content takes in workflow state (a stored text counts as its reference); absent in older runs, then counted on load. */
  pending_bytes?: number;
}

/** Remembered ids; a retry arrives within seconds, so a few thousand is plenty. */
const RECENT_IDS = 4096;
/**
 * Keyed ids whose words are remembered too (a reused key with other words is refused): about 60 bytes each in state,
 * so fewer than all remembered ids. An older keyed id is still delivered once; its key is no longer checked.
 */
const KEYED_IDS = 1024;
/** One read hands over at most this much content (always at least one item). */
const READ_BYTES = 512 * 1024;

export function emptyInbox(): InboxData {
  return { items: [], next_seq: 1, acked_through: 0, recent_ids: [] };
}

/**
 * The agent's durable inbox. Items get increasing sequence numbers; the
 * runtime reads after a cursor and acknowledges through a sequence number,
 * and only then are items dropped, so a dropped connection loses nothing.
 */
export class Inbox {
  private readonly recent: Set<string>;
  /** Told of every new item (the agent's event writer passes the word on to long polls). */
  onPush: () => void = () => undefined;

  constructor(readonly data: InboxData) {
    this.recent = new Set(data.recent_ids);
    data.pending_bytes ??= data.items.reduce((sum, item) => sum + stateBytes(item.content), 0);
  }

  /** Messages waiting for acknowledgement, the number the inbox cap applies to. */
  get pending(): number {
    return this.data.items.length;
  }

  /** Content bytes waiting for acknowledgement: what the inbox holds in workflow state. */
  get pendingBytes(): number {
    return this.data.pending_bytes ?? 0;
  }

  /** Drops the unacknowledged items of one kind from one sender (superseded by a newer one). */
  drop(from: string, kind: InboxKind): void {
    const gone = this.data.items.filter((i) => i.from === from && i.kind === kind);
    if (gone.length === 0) return;
    this.data.items = this.data.items.filter((i) => !(i.from === from && i.kind === kind));
    this.data.pending_bytes = this.pendingBytes - gone.reduce((sum, item) => sum + stateBytes(item.content), 0);
  }

  /** Counts the budget again after texts moved to the content store (workflows/agent/spill.ts). */
  recount(): void {
    this.data.pending_bytes = this.data.items.reduce((sum, item) => sum + stateBytes(item.content), 0);
  }

  has(messageId: string): boolean {
    return this.recent.has(messageId);
  }

  /** The fingerprint a keyed message was accepted with, while its id is remembered. */
  fingerprintOf(messageId: string): string | undefined {
    return this.data.keyed?.[messageId];
  }

  push(kind: InboxKind, from: string | null, content: Text, messageId: string, ts: number, fingerprint?: string): InboxItem {
    const item: InboxItem = { seq: this.data.next_seq++, message_id: messageId, kind, from, content, ts };
    this.data.items.push(item);
    this.data.pending_bytes = this.pendingBytes + stateBytes(content);
    this.remember(messageId);
    if (fingerprint !== undefined) this.rememberKeyed(messageId, fingerprint);
    this.onPush();
    return item;
  }

  /** A pending item as its delivery answers it (types.ts, InboxNews); undefined once it is acknowledged or dropped. */
  newsOf(messageId: string): Omit<InboxNews, 'status'> | undefined {
    // From the newest: asked right after the push, it finds its item at once, whatever the inbox holds.
    const items = this.data.items;
    let at = items.length - 1;
    while (at >= 0 && items[at].message_id !== messageId) at--;
    if (at < 0) return undefined;
    const item = items[at];
    return { seq: item.seq, ts: item.ts, before: at > 0 ? items[at - 1].seq : 0 };
  }

  after(cursor: number, limit: number): InboxItem[] {
    const from = Math.max(cursor, this.data.acked_through);
    const out: InboxItem[] = [];
    let bytes = 0;
    for (const item of this.data.items) {
      if (item.seq <= from) continue;
      // What the reader receives once stored texts are filled in.
      bytes += textBytes(item.content);
      if (out.length >= limit || (out.length > 0 && bytes > READ_BYTES)) break;
      out.push(item);
    }
    return out;
  }

  /** Drops items through upTo and returns them; acknowledging the past again is a no-op. */
  ack(upTo: number): InboxItem[] {
    const through = Math.min(upTo, this.data.next_seq - 1);
    if (through <= this.data.acked_through) return [];
    const done = this.data.items.filter((i) => i.seq <= through);
    this.data.items = this.data.items.filter((i) => i.seq > through);
    this.data.acked_through = through;
    this.data.pending_bytes = this.pendingBytes - done.reduce((sum, item) => sum + stateBytes(item.content), 0);
    return done;
  }

  /** The newest keyed ids' fingerprints (insertion order is kept: message ids are never integer-like keys). */
  private rememberKeyed(id: string, fingerprint: string): void {
    const keyed = (this.data.keyed ??= {});
    keyed[id] = fingerprint;
    const ids = Object.keys(keyed);
    for (let i = 0; i < ids.length - KEYED_IDS; i++) delete keyed[ids[i]];
  }

  private remember(id: string): void {
    this.recent.add(id);
    this.data.recent_ids.push(id);
    if (this.data.recent_ids.length > RECENT_IDS) {
      const old = this.data.recent_ids.shift();
      if (old !== undefined) {
        this.recent.delete(old);
        if (this.data.keyed) delete this.data.keyed[old];
      }
    }
  }
}
