import { allHandlersFinished, condition, proxyActivities, upsertMemo, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DipperEvent } from '../src/common/stores/eventStore';

/** Events flushed per activity call; keeps each payload small. */
const BATCH = 200;
/**
 * And at most about this much JSON per call (a batch always takes one event,
 * which a content limit keeps to 256 KiB of text). Cut by count alone, 15
 * review reports of 256 KiB made one 3.8 MB activity input: over Temporal's
 * 2 MiB limit, so the workflow task failed on every attempt, for ever.
 */
const BATCH_CHARS = 384 * 1024;
/** Unwritten events that may ride through continue-as-new (see fitsCarry). */
const CARRY_CHARS = 128 * 1024;

/**
 * What a workflow waits for before it continues as new: no handler
 * running, and unwritten events small enough to carry. Carried whole,
 * fifteen large review reports made a 3 MB input that Temporal refused on
 * every attempt.
 */
export function readyToContinue(events: EventBuffer): () => boolean {
  return () => allHandlersFinished() && events.fitsCarry();
}
/** How long events gather before they are written. */
const FLUSH_WINDOW = '300ms';


/**
 * Events are records, not orchestration state. Handlers append here and
 * return at once; a background loop hands batches to a (regular) activity.
 * A local activity would hold the workflow task open, and with it the
 * answer to the tool call that emitted the event. Unflushed events ride
 * along through continue-as-new.
 */
export class EventBuffer {
  private flushing = false;
  /**
   * Keys (`<run>/<agent>`, `<run>/<qid>`) whose waiters the next write wakes:
   * a long poll waits for that word instead of asking Temporal every few
   * seconds. Unwritten ones travel through continue-as-new.
   */
  private readonly wakeKeys = new Set<string>();

  constructor(
    private readonly runId: string,
    private readonly agentId: string | null,
    readonly pending: DipperEvent[] = [],
    carriedWakes: string[] = [],
  ) {
    for (const key of carriedWakes) this.wakeKeys.add(key);
  }

  /**
   * Whether the unwritten events are small enough to travel through
   * continue-as-new, whose input Temporal caps at 2 MiB with everything
   * else the workflow holds. Larger, the workflow waits for its writer.
   */
  fitsCarry(): boolean {
    let chars = 0;
    for (const e of this.pending) {
      chars += JSON.stringify(e).length;
      if (chars > CARRY_CHARS) return false;
    }
    return true;
  }

  /**
   * Unwritten events have outgrown what continue-as-new may carry: the
   * event log has been unreachable for a while. Calls that would add more
   * are refused until it is back (checked in Update validators only, which
   * replay does not run), so state stays bounded and nothing is dropped.
   */
  backedUp(): boolean {
    return !this.fitsCarry();
  }

  /** The agent's inbox changed (or it ended): the next write tells the gateways, with or without events of its own. */
  wakeInbox(): void {
    if (this.agentId !== null) this.wake(`${this.runId}/${this.agentId}`);
  }

  /** Whoever waits on `key` (a long poll, an ask_user call) looks again after the next write. */
  wake(key: string): void {
    this.wakeKeys.add(key);
  }

  /** Wakes not yet written, handed to the next run (and forgotten here). */
  takeWakes(): string[] | undefined {
    if (this.wakeKeys.size === 0) return undefined;
    const keys = [...this.wakeKeys];
    this.wakeKeys.clear();
    return keys;
  }

  private get due(): boolean {
    return this.pending.length > 0 || this.wakeKeys.size > 0;
  }

  emit(type: string, data: Record<string, unknown> = {}, agentId: string | null = this.agentId): void {
    this.pending.push({ event_id: uuid4(), run_id: this.runId, agent_id: agentId, type, ts: Date.now(), data });
  }

  /**
   * Runs for the workflow's life. With a window, events gather for a moment
   * first, so a burst of tool calls shares one write and the write's own
   * workflow task does not sit between back-to-back calls.
   */
  async flushForever(windowed: boolean): Promise<never> {
    for (;;) {
      await condition(() => this.due && !this.flushing);
      if (windowed) await condition(() => this.pending.length >= BATCH, FLUSH_WINDOW);
      await this.flush();
    }
  }

  /** Writes everything pending, waiting for a batch already in flight; before continue-as-new or the end. */
  async drain(): Promise<void> {
    await condition(() => !this.flushing);
    await this.flush();
  }

  private async flush(): Promise<void> {
    // One writer at a time: two would take the same batch and both remove it.
    if (this.flushing) await condition(() => !this.flushing);
    this.flushing = true;
    try {
      while (this.due) {
        const batch = nextBatch(this.pending);
        const wake = this.wakeKeys.size > 0 ? [...this.wakeKeys] : undefined;
        this.wakeKeys.clear();
        try {
          await recordEvents(batch, wake);
        } catch (err) {
          for (const key of wake ?? []) this.wakeKeys.add(key);
          throw err;
        }
        this.pending.splice(0, batch.length);
      }
    } finally {
      this.flushing = false;
    }
  }
}

/**
 * The events at the head of the queue that fit one write. Characters of
 * JSON stand for bytes: a character is at most 3 bytes in UTF-8, so a batch
 * stays under 1.2 MB whatever the text.
 */
function nextBatch(pending: DipperEvent[]): DipperEvent[] {
  let chars = 0;
  let n = 0;
  while (n < pending.length && n < BATCH) {
    chars += JSON.stringify(pending[n]).length;
    if (n > 0 && chars > BATCH_CHARS) break;
    n++;
  }
  return pending.slice(0, n);
}

/**
 * Time to continue as new: Temporal suggests it, or the history passed our
 * own, lower threshold (older runs' limits lack the field).
 */
export function historyFull(input: { limits: { continueAsNewEvents?: number } }): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > (input.limits.continueAsNewEvents ?? 2000);
}

// Retried for ever (events are never dropped), but at least every 5 s: after an outage of the event log the backlog
// goes out within seconds of its return, not up to the default 100 s later, and the calls it held back are taken again.
// A write takes milliseconds and may run twice (its rows are keyed): one lost with a killed worker is sent again after
// 10 s, not 30, and the events behind it (a review approved, a termination forced) wait that much less.
const background = proxyActivities<Activities>({ startToCloseTimeout: '10s', retry: { maximumInterval: '5s' } });

/** Writes a batch, then closes the write with a memo upsert (markWritten); `wake` names the keys whose waiters look again. */
async function recordEvents(batch: DipperEvent[], wake: string[] | undefined): Promise<void> {
  await background.recordEvents(batch, wake);
  markWritten();
}

/**
 * The workflow task that learns a batch was written always issues a command
 * (a memo upsert). Without one it could complete empty and be followed at
 * once by an Update's workflow task; the SDK's core then groups its events
 * one way on a worker that has not run the workflow before (a restart) and
 * the other way on replay, and the workflow can never be replayed again:
 * docs/decisions.md, "An empty workflow task before an Update".
 */
function markWritten(): void {
  upsertMemo({ dipper_events_written_at: Date.now() });
}
