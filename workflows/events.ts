import { condition, patched, proxyActivities, proxyLocalActivities, uuid4, workflowInfo } from '@temporalio/workflow';
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
  return {
    inBackground,
    // Histories recorded before the gathering window wrote each batch at once.
    windowed: patched('events-flush-window'),
    record: inBackground ? (batch) => background.recordEvents(batch) : (batch) => inline.recordEvents(batch),
  };
}
