import { TaskServiceError } from './errors';
import { iso, type Caller, type Store } from './store';

/** A row of `tasks` as read with TASK_COLUMNS. List fields are JSON text. */
export interface TaskRow {
  id: number;
  scope_id: string;
  workspace: string;
  channel: string;
  number: number;
  parent_number: number | null;
  title: string;
  description: string;
  status: string;
  priority: string;
  assignee: string | null;
  creator: string;
  labels: string;
  checklist: string;
  urls: string;
  messages: string;
  workspaces: string;
  attachments: string;
  blocker: string | null;
  thread: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  deleted_by: string | null;
  subtask_count: number;
}

/** Every column plus the live child count, for queries that alias `tasks` as `t`. */
export const TASK_COLUMNS = `t.*, (SELECT COUNT(*) FROM tasks c
  WHERE c.workspace = t.workspace AND c.channel = t.channel AND c.parent_number = t.number AND c.deleted_at IS NULL) AS subtask_count`;

export function taskView(row: TaskRow) {
  return {
    scopeId: row.scope_id,
    channel: row.channel,
    number: row.number,
    parentNumber: row.parent_number,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    assignee: row.assignee,
    creator: row.creator,
    labels: JSON.parse(row.labels) as string[],
    checklist: JSON.parse(row.checklist) as { text: string; done: boolean }[],
    urls: JSON.parse(row.urls) as string[],
    messages: JSON.parse(row.messages) as string[],
    workspaces: JSON.parse(row.workspaces) as string[],
    attachments: JSON.parse(row.attachments) as { name: string; url: string; sizeBytes?: number; mediaType?: string }[],
    blocker: row.blocker,
    thread: row.thread,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    subtaskCount: row.subtask_count,
  };
}

/** What task_get lists of each child: enough to pick one, not its whole profile. */
export function compactView(row: TaskRow) {
  return {
    scopeId: row.scope_id,
    number: row.number,
    title: row.title,
    status: row.status,
    priority: row.priority,
    assignee: row.assignee,
    updatedAt: iso(row.updated_at),
    subtaskCount: row.subtask_count,
  };
}

export function findTask(store: Store, workspace: string, channel: string, number: number): TaskRow | undefined {
  return store.sql(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.workspace = ? AND t.channel = ? AND t.number = ?`).get(workspace, channel, number) as
    | TaskRow
    | undefined;
}

export function missingTask(channel: string, number: number): TaskServiceError {
  return new TaskServiceError(404, 'task_not_found', `No task #${number} on ${channel}.`);
}

export function deletedTask(row: TaskRow): TaskServiceError {
  return new TaskServiceError(410, 'task_deleted', `Task #${row.number} on ${row.channel} was deleted.`, {
    details: { number: row.number, deletedAt: iso(row.deleted_at ?? 0), deletedBy: row.deleted_by },
  });
}

/** A task that exists and is not deleted, or the 404 / 410 that says which. */
export function liveTask(store: Store, caller: Caller, channel: string, number: number): TaskRow {
  const row = findTask(store, caller.workspace, channel, number);
  if (!row) throw missingTask(channel, number);
  if (row.deleted_at !== null) throw deletedTask(row);
  return row;
}

/** The next updatedAt of a task: now, or 1 ms past the last one when the clock has not moved on, so it always grows. */
export function nextStamp(store: Store, row: { updated_at: number }): number {
  return Math.max(store.now(), row.updated_at + 1);
}

export type EventType = 'task.created' | 'task.updated' | 'task.claimed' | 'task.released' | 'task.checkpointed' | 'task.deleted';

export function appendEvent(store: Store, caller: Caller, type: EventType, channel: string, number: number, at: number): void {
  store
    .sql('INSERT INTO events (workspace, type, channel, number, agent, at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(caller.workspace, type, channel, number, caller.agent, at);
}

/** Lower-cased copies searched by task_list, so matching ignores case beyond ASCII too. */
export function fold(text: string): string {
  return text.toLowerCase();
}
