import { requireBoard } from './boards';
import { checkpointView, type CheckpointRow } from './checkpoint';
import type { Caller, Store } from './store';
import { compactView, liveTask, TASK_COLUMNS, taskView, type TaskRow } from './tasks';

/** task_get answers in bounded sections; the counts say how much more there is. */
const SUBTASKS_SHOWN = 20;
const CHECKPOINTS_SHOWN = 10;

export function getTask(store: Store, caller: Caller, channel: string, number: number) {
  requireBoard(store, caller, channel);
  // One read transaction, so the task, its children and its checkpoints are one moment's view.
  return store.db.transaction(() => {
    const row = liveTask(store, caller, channel, number);
    const subtasks = store
      .sql(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.workspace = ? AND t.channel = ? AND t.parent_number = ? AND t.deleted_at IS NULL ORDER BY t.number LIMIT ?`)
      .all(caller.workspace, channel, number, SUBTASKS_SHOWN) as TaskRow[];
    // The newest ten, shown oldest first so they read as a log.
    const checkpoints = (
      store.sql('SELECT id, summary, author, created_at FROM checkpoints WHERE task_id = ? ORDER BY seq DESC LIMIT ?').all(row.id, CHECKPOINTS_SHOWN) as CheckpointRow[]
    ).reverse();
    const { n } = store.sql('SELECT COUNT(*) AS n FROM checkpoints WHERE task_id = ?').get(row.id) as { n: number };
    return {
      task: taskView(row),
      subtasks: subtasks.map(compactView),
      subtaskCount: row.subtask_count,
      checkpoints: checkpoints.map(checkpointView),
      checkpointCount: n,
    };
  })();
}
