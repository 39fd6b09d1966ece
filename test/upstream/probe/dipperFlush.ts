import { defineSignal, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';
import { EventBuffer } from '../../../workflows/events';

/** Changes nothing: its only effect is a workflow task with no commands. */
export const idleSignal = defineSignal('idle');
/** Records one event, as a tool call's Update does. */
export const recordUpdate = defineUpdate<number>('record');

/**
 * Dipper's own event writer (workflows/events.ts, EventBuffer with its
 * window, as agents and runs use it) on a workflow of its own: one event at
 * the start, one more per Update. Whatever the writer does after a write
 * (markWritten(), the closing memo upsert, today) is what the test sees; the
 * write is the probe worker's `recordEvents`, which the test holds.
 */
export async function dipperFlushProbe(): Promise<void> {
  const events = new EventBuffer(workflowInfo().workflowId, null);
  let notes = 0;
  setHandler(idleSignal, () => undefined);
  setHandler(recordUpdate, () => {
    events.emit('probe.note', { n: ++notes });
    return notes;
  });
  events.emit('probe.started');
  await events.flushForever(true);
}
