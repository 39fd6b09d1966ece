import { requireBoard } from './boards';
import { TaskServiceError } from './errors';
import type { UpdateBody } from './inputs';
import { iso, type Caller, type Store } from './store';
import { appendEvent, findTask, fold, liveTask, nextStamp, taskView, type TaskRow } from './tasks';

const LOCATORS = new Set(['channel', 'number', 'expectedUpdatedAt']);

/**
 * task_update: the fields given replace the task's, `null` clears the
 * nullable ones. The whole row is written back with one statement whatever
 * changed, so there is one prepared UPDATE rather than one per field set.
 */
export function updateTask(store: Store, caller: Caller, body: UpdateBody) {
  if (Object.keys(body).every((key) => LOCATORS.has(key))) {
    throw new TaskServiceError(400, 'empty_update', 'Give at least one field to change.');
  }
  const { parent } = body;
  if (typeof parent === 'number' && !(Number.isInteger(parent) && parent > 0)) {
    throw new TaskServiceError(400, 'invalid_parent', 'parent must be a positive task number, or null for top level.', { field: 'parent' });
  }
  requireBoard(store, caller, body.channel);
  return store.db
    .transaction(() => {
      const row = liveTask(store, caller, body.channel, body.number);
      if (body.expectedUpdatedAt !== undefined && Date.parse(body.expectedUpdatedAt) !== row.updated_at) {
        throw new TaskServiceError(409, 'stale_update', 'The task changed since you read it; read it again and retry.', {
          details: { updatedAt: iso(row.updated_at) },
        });
      }
      if (typeof parent === 'number') checkNewParent(store, row, parent);
      const at = nextStamp(store, row);
      const next = {
        title: body.title ?? row.title,
        description: body.description ?? row.description,
        status: body.status ?? row.status,
        priority: body.priority ?? row.priority,
        assignee: body.assignee === undefined ? row.assignee : body.assignee,
        labels: body.labels === undefined ? row.labels : JSON.stringify(body.labels),
        checklist: body.checklist === undefined ? row.checklist : JSON.stringify(body.checklist),
        urls: body.urls === undefined ? row.urls : JSON.stringify(body.urls),
        messages: body.messages === undefined ? row.messages : JSON.stringify(body.messages),
        workspaces: body.workspaces === undefined ? row.workspaces : JSON.stringify(body.workspaces),
        attachments: body.attachments === undefined ? row.attachments : JSON.stringify(body.attachments),
        blocker: body.blocker === undefined ? row.blocker : body.blocker,
        thread: body.thread === undefined ? row.thread : body.thread,
        parent_number: parent === undefined ? row.parent_number : parent,
      };
      store
        .sql(
          `UPDATE tasks SET title = @title, title_fold = @title_fold, description = @description, description_fold = @description_fold,
            status = @status, priority = @priority, assignee = @assignee, labels = @labels, checklist = @checklist, urls = @urls,
            messages = @messages, workspaces = @workspaces, attachments = @attachments, blocker = @blocker, thread = @thread,
            parent_number = @parent_number, updated_at = @at WHERE id = @id`,
        )
        .run({ ...next, title_fold: fold(next.title), description_fold: fold(next.description), at, id: row.id });
      appendEvent(store, caller, 'task.updated', row.channel, row.number, at);
      return { task: taskView(findTask(store, caller.workspace, row.channel, row.number) as TaskRow) };
    })
    .immediate();
}

/** The new parent must be a live task of the same board and not the task itself or one of its descendants. */
function checkNewParent(store: Store, task: TaskRow, parent: number): void {
  const target = findTask(store, task.workspace, task.channel, parent);
  if (!target || target.deleted_at !== null) {
    throw new TaskServiceError(404, 'parent_not_found', `No task #${parent} on ${task.channel} to be the parent.`);
  }
  const cycle = store
    .sql(
      `WITH RECURSIVE up (number, parent) AS (
         SELECT number, parent_number FROM tasks WHERE workspace = @ws AND channel = @channel AND number = @start
         UNION
         SELECT t.number, t.parent_number FROM tasks t JOIN up ON t.number = up.parent WHERE t.workspace = @ws AND t.channel = @channel
       ) SELECT 1 FROM up WHERE number = @self LIMIT 1`,
    )
    .get({ ws: task.workspace, channel: task.channel, start: parent, self: task.number });
  if (cycle !== undefined) {
    throw new TaskServiceError(400, 'invalid_parent', `Task #${parent} is #${task.number} itself or one of its subtasks: that would be a cycle.`, {
      field: 'parent',
    });
  }
}
