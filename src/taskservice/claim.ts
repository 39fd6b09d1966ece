import { requireBoard } from './boards';
import type { Caller, Store } from './store';
import { appendEvent, deletedTask, findTask, missingTask, nextStamp } from './tasks';

interface ClaimFailure {
  number: number;
  code: 'task_not_found' | 'task_deleted' | 'claimed_by_other' | 'not_assignee';
  message: string;
}

/**
 * task_set_claim: a desired state, never a toggle. Each task succeeds or
 * fails on its own; the ones brought to the state are written in one
 * transaction, and a task already there is left alone (its updatedAt too).
 */
export function setClaim(store: Store, caller: Caller, channel: string, numbers: number[], claimed: boolean) {
  requireBoard(store, caller, channel);
  return store.db
    .transaction(() => {
      let changed = 0;
      let unchanged = 0;
      const failures: ClaimFailure[] = [];
      for (const number of numbers) {
        const row = findTask(store, caller.workspace, channel, number);
        if (!row) {
          failures.push({ number, code: 'task_not_found', message: missingTask(channel, number).message });
          continue;
        }
        if (row.deleted_at !== null) {
          failures.push({ number, code: 'task_deleted', message: deletedTask(row).message });
          continue;
        }
        const wanted = claimed ? caller.agent : null;
        if (row.assignee === wanted) {
          unchanged++;
          continue;
        }
        if (claimed && row.assignee !== null) {
          failures.push({ number, code: 'claimed_by_other', message: `Task #${number} is claimed by ${row.assignee}.` });
          continue;
        }
        if (!claimed && row.assignee !== caller.agent) {
          failures.push({ number, code: 'not_assignee', message: `Task #${number} is assigned to ${row.assignee}, not to you.` });
          continue;
        }
        const at = nextStamp(store, row);
        store.sql('UPDATE tasks SET assignee = ?, updated_at = ? WHERE id = ?').run(wanted, at, row.id);
        appendEvent(store, caller, claimed ? 'task.claimed' : 'task.released', channel, number, at);
        changed++;
      }
      return { changed, unchanged, failures };
    })
    .immediate();
}
