import { requireBoard } from './boards';
import { TaskServiceError } from './errors';
import type { Caller, Store } from './store';
import { appendEvent, liveTask, nextStamp } from './tasks';

/**
 * task_delete, by the task's creator only. Its children are either promoted
 * to top level (`promote`) or deleted with it (`delete`, only when every
 * descendant has the same creator). Each deleted task keeps its row as a
 * tombstone and gets a task.deleted event, all in one transaction.
 */
export function deleteTask(store: Store, caller: Caller, channel: string, number: number, mode: 'promote' | 'delete' | undefined) {
  requireBoard(store, caller, channel);
  return store.db
    .transaction(() => {
      const task = liveTask(store, caller, channel, number);
      if (task.creator !== caller.agent) {
        throw new TaskServiceError(403, 'not_creator', `Only ${task.creator}, who created task #${number}, may delete it.`);
      }
      const at = store.now();
      const deleted = [number];
      const promoted: number[] = [];
      if (task.subtask_count > 0) {
        if (mode === undefined) {
          throw new TaskServiceError(409, 'subtask_mode_required', `Task #${number} has subtasks: give subtaskMode "promote" or "delete".`, {
            field: 'subtaskMode',
          });
        }
        if (mode === 'promote') {
          for (const child of children(store, caller, channel, number)) {
            const stamp = nextStamp(store, child);
            store.sql('UPDATE tasks SET parent_number = NULL, updated_at = ? WHERE id = ?').run(stamp, child.id);
            appendEvent(store, caller, 'task.updated', channel, child.number, stamp);
            promoted.push(child.number);
          }
        } else {
          const below = descendants(store, caller, channel, number);
          const others = below.filter((row) => row.creator !== caller.agent).map((row) => row.number);
          if (others.length > 0) {
            throw new TaskServiceError(409, 'mixed_creators', 'Some subtasks were created by other agents; promote them instead.', {
              details: { numbers: others },
            });
          }
          deleted.push(...below.map((row) => row.number));
        }
      }
      const tombstone = store.sql(
        'UPDATE tasks SET deleted_at = ?, deleted_by = ? WHERE workspace = ? AND channel = ? AND number = ? AND deleted_at IS NULL',
      );
      for (const n of deleted) {
        tombstone.run(at, caller.agent, caller.workspace, channel, n);
        appendEvent(store, caller, 'task.deleted', channel, n, at);
      }
      return { deleted, promoted };
    })
    .immediate();
}

interface Family {
  id: number;
  number: number;
  creator: string;
  updated_at: number;
}

function children(store: Store, caller: Caller, channel: string, number: number): Family[] {
  return store
    .sql(
      'SELECT id, number, creator, updated_at FROM tasks WHERE workspace = ? AND channel = ? AND parent_number = ? AND deleted_at IS NULL ORDER BY number',
    )
    .all(caller.workspace, channel, number) as Family[];
}

function descendants(store: Store, caller: Caller, channel: string, number: number): Family[] {
  return store
    .sql(
      `WITH RECURSIVE below (id, number, creator, updated_at) AS (
         SELECT id, number, creator, updated_at FROM tasks WHERE workspace = @ws AND channel = @channel AND parent_number = @number AND deleted_at IS NULL
         UNION
         SELECT t.id, t.number, t.creator, t.updated_at FROM tasks t JOIN below ON t.parent_number = below.number
         WHERE t.workspace = @ws AND t.channel = @channel AND t.deleted_at IS NULL
       ) SELECT * FROM below ORDER BY number`,
    )
    .all({ ws: caller.workspace, channel, number }) as Family[];
}
