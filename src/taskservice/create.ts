import { createHash, randomBytes } from 'node:crypto';
import { allocateNumbers, isMember, requireBoard } from './boards';
import { canonicalJson } from '../common/canonicalJson';
import { TaskServiceError } from './errors';
import { TARGET, type CreateBody, type NewTask } from './inputs';
import type { Caller, Store } from './store';
import { appendEvent, findTask, fold } from './tasks';

interface Created {
  scopeId: string;
  channel: string;
  number: number;
  title: string;
  parentNumber: number | null;
}

export interface CreateAnswer {
  tasks: Created[];
  reused: boolean;
}

const TOOL = 'task_create';

function parentNotFound(): TaskServiceError {
  // One answer for unknown, deleted, foreign and not-yours: a caller cannot probe for tasks it may not see.
  return new TaskServiceError(404, 'parent_not_found', 'No such parent task on a board of this agent.');
}

/**
 * task_create. Everything that can be checked from the request alone is
 * checked before the transaction; inside it, the receipt (if any) is read
 * first, then the locator resolved, numbers allocated, tasks, events and the
 * receipt written together. A refusal anywhere leaves the store untouched.
 */
export function createTasks(store: Store, caller: Caller, body: CreateBody): CreateAnswer {
  const parent = body.parent ?? undefined;
  const scope = body.parentTaskScope;
  if (scope ? body.channel !== undefined || parent !== undefined : body.channel === undefined) {
    throw new TaskServiceError(400, 'invalid_locator', 'Give exactly one locator: channel (with an optional parent), or parentTaskScope alone.');
  }
  if (parent !== undefined && !(Number.isInteger(parent) && parent > 0)) {
    throw new TaskServiceError(400, 'invalid_parent', 'parent must be a positive task number.', { field: 'parent' });
  }
  if (body.tasks.length > 1) checkTitlesOnly(body.tasks);
  const targetChannel = body.target === undefined ? undefined : TARGET.exec(body.target)?.[1];
  if (body.channel !== undefined) checkTarget(targetChannel, body.channel);

  const locator = scope ? { parentTaskScope: scope } : { channel: body.channel, parent };
  const digest = createHash('sha256').update(canonicalJson({ locator, tasks: body.tasks, target: body.target })).digest('hex');
  const receiptKey = body.idempotencyKey === undefined ? null : [caller.workspace, caller.agent, body.runId, TOOL, body.idempotencyKey];

  return store.db
    .transaction((): CreateAnswer => {
      if (receiptKey) {
        const receipt = store
          .sql('SELECT digest, answer FROM receipts WHERE workspace = ? AND agent = ? AND run_id = ? AND tool = ? AND key = ?')
          .get(...receiptKey) as { digest: string; answer: string } | undefined;
        if (receipt && receipt.digest !== digest) {
          throw new TaskServiceError(409, 'idempotency_conflict', 'This idempotencyKey was used with another payload.', { field: 'idempotencyKey' });
        }
        if (receipt) return { tasks: JSON.parse(receipt.answer) as Created[], reused: true };
      }

      let channel: string;
      let parentNumber: number | null = null;
      if (scope) {
        const row = scope.kind === 'task' ? findByScope(store, caller, scope.scopeId) : undefined;
        if (!row || row.deleted_at !== null || !isMember(store, caller, row.channel)) throw parentNotFound();
        channel = row.channel;
        parentNumber = row.number;
        checkTarget(targetChannel, channel);
      } else {
        channel = body.channel as string;
        requireBoard(store, caller, channel);
        if (parent !== undefined) {
          const row = findTask(store, caller.workspace, channel, parent);
          if (!row || row.deleted_at !== null) throw parentNotFound();
          parentNumber = parent;
        }
      }

      const first = allocateNumbers(store, caller.workspace, channel, body.tasks.length);
      const at = store.now();
      const tasks = body.tasks.map((task, i): Created => {
        const number = first + i;
        const scopeId = `tsk_${randomBytes(12).toString('hex')}`;
        insertTask(store, caller, { scopeId, channel, number, parentNumber, thread: body.target ?? null, at }, task);
        appendEvent(store, caller, 'task.created', channel, number, at);
        return { scopeId, channel, number, title: task.title, parentNumber };
      });
      if (receiptKey) {
        store
          .sql('INSERT INTO receipts (workspace, agent, run_id, tool, key, digest, answer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
          .run(...receiptKey, digest, JSON.stringify(tasks), at);
      }
      return { tasks, reused: false };
    })
    .immediate();
}

/** A batch is the bulk path: titles only, so one rich field cannot be silently copied onto fifty tasks. */
function checkTitlesOnly(tasks: NewTask[]): void {
  tasks.forEach((task, i) => {
    const extra = Object.keys(task).find((key) => key !== 'title');
    if (extra !== undefined) {
      throw new TaskServiceError(400, 'batch_fields', 'A batch of more than one task carries titles only; create a rich task on its own.', {
        field: `tasks[${i}].${extra}`,
      });
    }
  });
}

function checkTarget(targetChannel: string | undefined, board: string): void {
  if (targetChannel !== undefined && targetChannel !== board) {
    throw new TaskServiceError(400, 'target_conflict', `target names #${targetChannel}, but the tasks go on ${board}.`, { field: 'target' });
  }
}

function findByScope(store: Store, caller: Caller, scopeId: string) {
  return store.sql('SELECT channel, number, deleted_at FROM tasks WHERE scope_id = ? AND workspace = ?').get(scopeId, caller.workspace) as
    | { channel: string; number: number; deleted_at: number | null }
    | undefined;
}

interface Placement {
  scopeId: string;
  channel: string;
  number: number;
  parentNumber: number | null;
  thread: string | null;
  at: number;
}

function insertTask(store: Store, caller: Caller, p: Placement, task: NewTask): void {
  const description = task.description ?? '';
  store
    .sql(
      `INSERT INTO tasks (scope_id, workspace, channel, number, parent_number, title, description, title_fold, description_fold,
        status, priority, assignee, creator, labels, checklist, urls, messages, workspaces, attachments, blocker, thread, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      p.scopeId,
      caller.workspace,
      p.channel,
      p.number,
      p.parentNumber,
      task.title,
      description,
      fold(task.title),
      fold(description),
      task.status ?? 'todo',
      task.priority ?? 'normal',
      task.assignee ?? null,
      caller.agent,
      JSON.stringify(task.labels ?? []),
      JSON.stringify(task.checklist ?? []),
      JSON.stringify(task.urls ?? []),
      JSON.stringify(task.workspaces ?? []),
      JSON.stringify(task.attachments ?? []),
      task.blocker ?? null,
      p.thread,
      p.at,
      p.at,
    );
}
