import { condition, defineSignal, defineUpdate, proxyActivities, setHandler, sleep, upsertMemo } from '@temporalio/workflow';

/** The activity the probe writes with; emptyTaskBeforeUpdate.test.ts holds its first call until it says so. */
export interface WriteActivities {
  write(): Promise<void>;
}

const { write } = proxyActivities<WriteActivities>({ startToCloseTimeout: '1 minute' });

/** Changes nothing: its only effect is a workflow task with no commands. */
export const nudgeSignal = defineSignal('nudge');
export const noteUpdate = defineUpdate<number>('note');

/**
 * Dipper's event-flush loop in miniature (workflows/events.ts): notes wait
 * for a short gathering window when none were pending, and are written at
 * once when some were. So its commands tell which activation resumed the
 * loop: a timer when the write's completion came on its own, an activity
 * when it came together with the Update that added a note.
 * `closeWithCommand` ends each write with a memo upsert, as markWritten() does.
 */
export async function flushLoopProbe(closeWithCommand: boolean): Promise<void> {
  let pending = 1;
  setHandler(nudgeSignal, () => undefined);
  setHandler(noteUpdate, () => ++pending);
  for (;;) {
    if (pending === 0) {
      await condition(() => pending > 0);
      await sleep(100);
    }
    pending = 0;
    await write();
    if (closeWithCommand) upsertMemo({ probe_written: true });
  }
}
