/**
 * Receipts: what a completed call answered, kept for a while, so the same
 * call sent again (a runtime retrying after its answer was lost) gets the
 * same answer instead of doing the work twice. One mechanism for every
 * tool that creates something: beidou's create_team (a repeated spawn_agent
 * is refused instead, with task_not_pending naming the agent it started),
 * and iSphere's idempotency keys later (their key is the caller's; here it
 * is derived from the call itself). The task board keeps its receipts in
 * the Task service and uses callKey only to name a keyed create's workflow.
 *
 * Kept in the owning workflow's state, bounded in count and age, and only
 * for calls that succeeded: a refused call did nothing, so sending it again
 * is asked again.
 */
export interface ReceiptData {
  entries: { key: string; at: number; answer: unknown }[];
}

/** A retry after a lost answer comes within a client's timeout; five minutes is far past any. */
export const RECEIPT_TTL_MS = 5 * 60_000;
/** A create_team answer is at most 100 members (about 7 KB): 20 receipts keep this under 150 KB of state. */
const MAX_RECEIPTS = 20;

export class Receipts {
  constructor(private readonly data: ReceiptData) {}

  /** Reads only (validators call it too): what `key` answered within the last RECEIPT_TTL_MS, or undefined. */
  find(key: string, now: number): unknown {
    return this.data.entries.find((e) => e.key === key && e.at >= now - RECEIPT_TTL_MS)?.answer;
  }

  keep(key: string, answer: unknown, now: number): void {
    this.prune(now);
    this.data.entries.push({ key, at: now, answer });
    if (this.data.entries.length > MAX_RECEIPTS) this.data.entries.splice(0, this.data.entries.length - MAX_RECEIPTS);
  }

  private prune(now: number): void {
    const keepAfter = now - RECEIPT_TTL_MS;
    const first = this.data.entries.findIndex((e) => e.at >= keepAfter);
    this.data.entries.splice(0, first === -1 ? this.data.entries.length : first);
  }
}

/**
 * The key of a call: its tool and its input in a canonical form (object
 * keys sorted), hashed (FNV-1a, 64 bits as two 32-bit halves) so a large
 * input keeps a small key. Deterministic, as workflow code must be.
 */
export function callKey(tool: string, input: unknown): string {
  const text = `${tool}\u0000${canonical(input)}`;
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return `${tool}:${h1.toString(16).padStart(8, '0')}${h2.toString(16).padStart(8, '0')}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
