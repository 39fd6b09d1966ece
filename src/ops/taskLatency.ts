import type { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * How long each workflow task a worker finished took, started to completed,
 * in ms, as the server recorded it: the time a task timeout is measured
 * against, so it says how close the worker came to it.
 */
export function workflowTaskMs(events: HistoryEvent[]): number[] {
  const startedAt = new Map<number, number>();
  const out: number[] = [];
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes) startedAt.set(Number(e.eventId), tsToMs(e.eventTime));
    const started = e.workflowTaskCompletedEventAttributes?.startedEventId;
    if (started === undefined || started === null) continue;
    const from = startedAt.get(Number(started));
    if (from !== undefined) out.push(tsToMs(e.eventTime) - from);
  }
  return out;
}

export interface LatencySummary {
  tasks: number;
  p50: number;
  p99: number;
  max: number;
}

/** The median, 99th percentile and largest of a set of durations (nearest rank). */
export function latencyOf(ms: number[]): LatencySummary {
  if (ms.length === 0) return { tasks: 0, p50: 0, p99: 0, max: 0 };
  const sorted = [...ms].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { tasks: sorted.length, p50: rank(0.5), p99: rank(0.99), max: sorted.at(-1)! };
}
