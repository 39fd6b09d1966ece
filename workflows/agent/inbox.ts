import type { InboxItem, InboxKind } from '../types';

export interface InboxData {
  items: InboxItem[];
  next_seq: number;
  acked_through: number;
  /** Recently accepted message ids, so a retried delivery is not queued twice. */
  recent_ids: string[];
}

/** Remembered ids; a retry arrives within seconds, so a few thousand is plenty. */
const RECENT_IDS = 4096;

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

  constructor(readonly data: InboxData) {
    this.recent = new Set(data.recent_ids);
  }

  /** Messages waiting for acknowledgement, the number the inbox cap applies to. */
  get pending(): number {
    return this.data.items.length;
  }

  has(messageId: string): boolean {
    return this.recent.has(messageId);
  }

  push(kind: InboxKind, from: string | null, content: string, messageId: string, ts: number): InboxItem {
    const item: InboxItem = { seq: this.data.next_seq++, message_id: messageId, kind, from, content, ts };
    this.data.items.push(item);
    this.remember(messageId);
    return item;
  }

  after(cursor: number, limit: number): InboxItem[] {
    const from = Math.max(cursor, this.data.acked_through);
    return this.data.items.filter((i) => i.seq > from).slice(0, limit);
  }

  /** Drops items through upTo and returns them; acknowledging the past again is a no-op. */
  ack(upTo: number): InboxItem[] {
    const through = Math.min(upTo, this.data.next_seq - 1);
    if (through <= this.data.acked_through) return [];
    const done = this.data.items.filter((i) => i.seq <= through);
    this.data.items = this.data.items.filter((i) => i.seq > through);
    this.data.acked_through = through;
    return done;
  }

  private remember(id: string): void {
    this.recent.add(id);
    this.data.recent_ids.push(id);
    if (this.data.recent_ids.length > RECENT_IDS) {
      const old = this.data.recent_ids.shift();
      if (old !== undefined) this.recent.delete(old);
    }
  }
}
