import { condition, patched, proxyActivities, proxyLocalActivities, upsertMemo, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DipperEvent } from './types';

/** Events flushed per activity call; keeps each payload small. */
const BATCH = 200;
/** How long events gather before they are written. */
const FLUSH_WINDOW = '300ms';

export type Recorder = (events: DipperEvent[]) => Promise<void>;

/**
 * Events are records, not orchestration state. Handlers append here and
 * return at once; a background loop hands batches to a (regular) activity.
 * A local activity would hold the workflow task open, and with it the
 * answer to the tool call that emitted the event. Unflushed events ride
 * along through continue-as-new.
 */
export class EventBuffer {
  private flushing = false;

  constructor(
    private readonly runId: string,
    private readonly agentId: string | null,
    readonly pending: DipperEvent[] = [],
  ) {}

  emit(type: string, data: Record<string, unknown> = {}, agentId: string | null = this.agentId): void {
    this.pending.push({ event_id: uuid4(), run_id: this.runId, agent_id: agentId, type, ts: Date.now(), data });
  }

  /**
   * Runs for the workflow's life. With a window, events gather for a moment
   * first, so a burst of tool calls shares one write and the write's own
   * workflow task does not sit between back-to-back calls.
   */
  async flushForever(record: Recorder, windowed: boolean): Promise<never> {
    for (;;) {
      await condition(() => this.pending.length > 0 && !this.flushing);
      if (windowed) await condition(() => this.pending.length >= BATCH, FLUSH_WINDOW);
      await this.flush(record);
    }
  }

  /** Writes everything pending, waiting for a batch already in flight; before continue-as-new or the end. */
  async drain(record: Recorder): Promise<void> {
    await condition(() => !this.flushing);
    await this.flush(record);
  }

  private async flush(record: Recorder): Promise<void> {
    // One writer at a time: two would take the same batch and both remove it.
    if (this.flushing) await condition(() => !this.flushing);
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.slice(0, BATCH);
        await record(batch);
        this.pending.splice(0, batch.length);
      }
    } finally {
      this.flushing = false;
    }
  }
}

/**
 * Time to continue as new: Temporal suggests it, or the history passed our
 * own, lower threshold (older runs' limits lack the field).
 */
export function historyFull(input: { limits: { continueAsNewEvents?: number } }): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > (input.limits.continueAsNewEvents ?? 8000);
}

const background = proxyActivities<Activities>({ startToCloseTimeout: '30s' });
const inline = proxyLocalActivities<Activities>({ startToCloseTimeout: '15s' });

/**
 * How this workflow writes events. Workflows started before events moved to
 * a background activity wrote them inline with a local activity from the
 * main loop, and keep doing so on replay.
 */
export function eventRecorder(): { inBackground: boolean; windowed: boolean; record: Recorder } {
  const inBackground = patched('events-in-background');
  // Histories recorded before the mark wrote batches without one.
  const marked = inBackground && patched('events-write-marked');
  return {
    inBackground,
    // Histories recorded before the gathering window wrote each batch at once.
    windowed: patched('events-flush-window'),
    record: !inBackground
      ? (batch) => inline.recordEvents(batch)
      : marked
        ? async (batch) => {
            await background.recordEvents(batch);
            markWritten();
          }
        : (batch) => background.recordEvents(batch),
  };
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
