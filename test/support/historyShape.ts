import fs from 'node:fs';
import path from 'node:path';

/** A history event as JSON (historyToJSON), read for its shape. */
export type HistoryEvent = Record<string, any>;

/** Each Update's name and the events between its acceptance and its own completion (none if it never completed). */
export function updateWindows(events: HistoryEvent[]): { name: string; window: HistoryEvent[] }[] {
  return events
    .filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)
    .map((accepted) => {
      const done = events.find((e) => e.workflowExecutionUpdateCompletedEventAttributes?.acceptedEventId === accepted.eventId);
      const window = done ? events.filter((e) => Number(e.eventId) > Number(accepted.eventId) && Number(e.eventId) < Number(done.eventId)) : [];
      return { name: accepted.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest.input.name as string, window };
    });
}

/** The events of one history file. */
export function eventsOf(file: string): HistoryEvent[] {
  return JSON.parse(fs.readFileSync(file, 'utf8')).events;
}

/** The recorded set's histories (test/replay/histories), by file name. */
export function recordedSet(): Map<string, HistoryEvent[]> {
  const dir = path.join(__dirname, '..', 'replay', 'histories');
  return new Map(fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => [f, eventsOf(path.join(dir, f))]));
}

export const workflowType = (events: HistoryEvent[]): string => events[0].workflowExecutionStartedEventAttributes.workflowType.name;

/** How many events of a type (without its EVENT_TYPE_ prefix). */
export const countOf = (events: HistoryEvent[], type: string): number => events.filter((e) => e.eventType === `EVENT_TYPE_${type}`).length;

/** Activity types scheduled, in order. */
export const scheduledActivities = (events: HistoryEvent[]): string[] => events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType.name ?? []);

/** Names of signals sent to other workflows, in order. */
export const signalsSent = (events: HistoryEvent[]): string[] => events.flatMap((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName ?? []);

/** Ids of the patches (patched()) whose markers the events hold. */
export const patchIds = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [JSON.parse(Buffer.from(data, 'base64').toString('utf8')).id as string] : [];
  });

/** Which completed workflow task issued each command: the number of WorkflowTaskCompleted events before it. */
export function taskOfEvent(events: HistoryEvent[], event: HistoryEvent): number {
  return events.slice(0, events.indexOf(event)).filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED').length;
}
