import { temporal } from '@temporalio/proto';
import type { History } from '../src/temporal';

export type HistoryEvent = NonNullable<History['events']>[number];

const EventType = temporal.api.enums.v1.EventType;

/** An event's time in epoch milliseconds (fractional), as the server recorded it. */
export function eventMs(e: HistoryEvent): number {
  const t = e.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

/** EVENT_TYPE_WORKFLOW_TASK_STARTED → WORKFLOW_TASK_STARTED. */
export function eventName(e: HistoryEvent): string {
  return (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
}

export function isType(e: HistoryEvent, name: keyof typeof EventType): boolean {
  return e.eventType === EventType[name];
}
