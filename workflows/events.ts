import { uuid4, workflowInfo } from '@temporalio/workflow';
import type { DipperEvent } from './types';

/** Events flushed per activity call; keeps each payload small. */
const BATCH = 200;

/**
 * Events are records, not orchestration state. Handlers append here and
 * return at once; the workflow's main loop hands batches to an activity, so
 * writing the log never slows a tool call. Unflushed events ride along
 * through continue-as-new.
 */
export class EventBuffer {
  constructor(
    private readonly runId: string,
    private readonly agentId: string | null,
    readonly pending: DipperEvent[] = [],
  ) {}

  emit(type: string, data: Record<string, unknown> = {}, agentId: string | null = this.agentId): void {
    this.pending.push({ event_id: uuid4(), run_id: this.runId, agent_id: agentId, type, ts: Date.now(), data });
  }

  async flush(record: (events: DipperEvent[]) => Promise<void>): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.slice(0, BATCH);
      await record(batch);
      this.pending.splice(0, batch.length);
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
