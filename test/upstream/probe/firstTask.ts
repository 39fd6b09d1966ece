import { condition, defineUpdate, patched, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { WriteActivities } from './emptyTask';

const { write } = proxyActivities<WriteActivities>({ startToCloseTimeout: '1 minute' });

export const addNoteUpdate = defineUpdate<number>('addNote');

/**
 * A run that starts with nothing to do, as an agent continued as new with
 * nothing carried: its first workflow task issues no command. Then notes
 * come by Update and are written as the event-flush loop writes them (a
 * short window first). `mark` makes the first task issue a command, as
 * Dipper's interceptor does (workflows/interceptors.ts, FIRST_TASK_MARK).
 */
export async function firstTaskProbe(mark: boolean): Promise<void> {
  if (mark) patched('probe-first-task');
  let pending = 0;
  setHandler(addNoteUpdate, () => ++pending);
  for (;;) {
    await condition(() => pending > 0);
    await sleep(100);
    pending = 0;
    await write();
  }
}
