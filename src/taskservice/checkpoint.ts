import { randomBytes } from 'node:crypto';
import { requireBoard } from './boards';
import { iso, type Caller, type Store } from './store';
import { appendEvent, liveTask, nextStamp } from './tasks';

export interface CheckpointRow {
  id: string;
  summary: string;
  author: string;
  created_at: number;
}

export function checkpointView(row: CheckpointRow) {
  return { id: row.id, summary: row.summary, author: row.author, createdAt: iso(row.created_at) };
}

/** task_checkpoint: appends one checkpoint; the task's updatedAt moves with it, as for any mutation. */
export function addCheckpoint(store: Store, caller: Caller, channel: string, number: number, summary: string) {
  requireBoard(store, caller, channel);
  return store.db
    .transaction(() => {
      const task = liveTask(store, caller, channel, number);
      const at = nextStamp(store, task);
      const row: CheckpointRow = { id: `ckp_${randomBytes(12).toString('hex')}`, summary, author: caller.agent, created_at: at };
      store.sql('INSERT INTO checkpoints (id, task_id, summary, author, created_at) VALUES (?, ?, ?, ?, ?)').run(row.id, task.id, summary, caller.agent, at);
      store.sql('UPDATE tasks SET updated_at = ? WHERE id = ?').run(at, task.id);
      appendEvent(store, caller, 'task.checkpointed', channel, number, at);
      return { checkpoint: checkpointView(row), taskUpdatedAt: iso(at) };
    })
    .immediate();
}
