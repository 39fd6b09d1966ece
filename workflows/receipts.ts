import { currentUpdateInfo, setHandler } from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';

/**
 * Receipts: what a call that changed a workflow answered, kept a while, so
 * the same call sent again gets the same answer instead of doing the work
 * twice. The one idempotency mechanism of workflow state, with two kinds of
 * key:
 * - an Update's id (`setUpdateOnce`). Temporal drops a repeated Update id
 *   within one run of a workflow, but a new run (after continue-as-new)
 *   applies it again: a gateway that lost an answer and sent the same
 *   Update again would find the plan declared twice, a spawn refused as
 *   task_not_pending, a child terminated twice. Kept for a minute: a
 *   gateway's retries stop at the call's deadline (15 s by default).
 * - a call's own key (`callKey`), for a tool with no rule of its own that
 *   makes a repeat harmless: create_team (a repeated spawn_agent is refused
 *   with task_not_pending, naming the agent it started). A runtime that
 *   retries after a lost answer sends a new Update; kept five minutes, far
 *   past any client's timeout.
 * Only calls that succeeded leave one: a refused call did nothing, so
 * sending it again is asked again. The receipts live in the workflow's
 * state and travel through continue-as-new with it, bounded in count and
 * size. The task board keeps its receipts in the Task service, and uses
 * callKey only to name a keyed create's workflow.
 */
export interface ReceiptData {
  entries: Receipt[];
}

interface Receipt {
  key: string;
  /** Workflow time it was kept, and how long it is good for. */
  at: number;
  ttl: number;
  answer: unknown;
  /** The answer's JSON length: what it adds to the state carried. */
  chars: number;
}

export const UPDATE_RECEIPT_MS = 60_000;
export const CALL_RECEIPT_MS = 5 * 60_000;
/** More than this many changing calls to one agent in five minutes is rare; the oldest go first. */
const MAX_RECEIPTS = 256;
/** What the answers may add to the continue-as-new input (a create_team of 100 answers in about 7 KB). */
const MAX_CHARS = 192 * 1024;

export class Receipts {
  constructor(private readonly data: ReceiptData) {}

  /** Reads only (validators call it too): what `key` answered while its receipt is good, or undefined. */
  find(key: string, now: number): { answer: unknown } | undefined {
    const kept = this.data.entries.find((e) => e.key === key && e.at + e.ttl >= now);
    return kept && { answer: kept.answer };
  }

  keep(key: string, answer: unknown, now: number, ttl: number): void {
    const chars = JSON.stringify(answer ?? null).length;
    // An answer too large to keep is left out: its retry is judged anew.
    if (chars > MAX_CHARS) return;
    const entries = this.data.entries.filter((e) => e.at + e.ttl >= now && e.key !== key);
    entries.push({ key, at: now, ttl, answer, chars });
    let total = entries.reduce((sum, e) => sum + e.chars, 0);
    while (entries.length > MAX_RECEIPTS || total > MAX_CHARS) total -= entries.shift()!.chars;
    this.data.entries.splice(0, this.data.entries.length, ...entries);
  }

  /** The receipt of the Update being handled, if a run of this workflow applied it. */
  ofUpdate(now: number): { answer: unknown } | undefined {
    const id = currentUpdateInfo()?.id;
    return id === undefined ? undefined : this.find(updateKey(id), now);
  }

  keepUpdate(answer: unknown, now: number): void {
    const id = currentUpdateInfo()?.id;
    if (id !== undefined) this.keep(updateKey(id), answer, now, UPDATE_RECEIPT_MS);
  }
}

const updateKey = (id: string) => `update:${id}`;

/**
 * setHandler for an Update that must not be applied twice across runs: an
 * id a run of this workflow applied skips the validator and gets its
 * answer. A handler that answers at once still answers at once: the
 * receipt is kept on the side, so the Update completes at the same point
 * of the workflow task as it always did.
 */
export function setUpdateOnce<Ret, Args extends unknown[]>(
  receipts: Receipts,
  def: UpdateDefinition<Ret, Args>,
  handler: (...args: Args) => Ret | Promise<Ret>,
  options: { validator?: (...args: Args) => void } = {},
): void {
  const validator = options.validator;
  setHandler(
    def,
    (...args: Args): Ret | Promise<Ret> => {
      const earlier = receipts.ofUpdate(Date.now());
      if (earlier) return earlier.answer as Ret;
      const answer = handler(...args);
      if (answer instanceof Promise) return answer.then((a) => (receipts.keepUpdate(a, Date.now()), a));
      receipts.keepUpdate(answer, Date.now());
      return answer;
    },
    validator ? { validator: (...args: Args) => void (receipts.ofUpdate(Date.now()) ?? validator(...args)) } : {},
  );
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
