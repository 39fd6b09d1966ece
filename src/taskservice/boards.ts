import { TaskServiceError } from './errors';
import type { Caller, Store } from './store';

/**
 * Boards (channels) and who may use them. They come into being when a token
 * is issued with them, and membership is only ever added: an agent never
 * loses a board it was given, so a create replayed later still finds it.
 */
export function joinBoards(store: Store, caller: Caller, channels: string[]): void {
  const at = store.now();
  store.sql('INSERT OR IGNORE INTO workspaces (id, created_at) VALUES (?, ?)').run(caller.workspace, at);
  store.sql('INSERT OR IGNORE INTO agents (workspace, id, created_at) VALUES (?, ?, ?)').run(caller.workspace, caller.agent, at);
  for (const channel of channels) {
    store.sql('INSERT OR IGNORE INTO channels (workspace, name, created_at) VALUES (?, ?, ?)').run(caller.workspace, channel, at);
    store
      .sql('INSERT OR IGNORE INTO memberships (workspace, agent, channel, created_at) VALUES (?, ?, ?, ?)')
      .run(caller.workspace, caller.agent, channel, at);
  }
}

export function isMember(store: Store, caller: Caller, channel: string): boolean {
  return (
    store.sql('SELECT 1 FROM memberships WHERE workspace = ? AND agent = ? AND channel = ?').get(caller.workspace, caller.agent, channel) !==
    undefined
  );
}

/** A board the caller may not use and one that does not exist look the same, and the answer lists what it may use. */
export function requireBoard(store: Store, caller: Caller, channel: string): void {
  if (isMember(store, caller, channel)) return;
  const channels = (
    store.sql('SELECT channel FROM memberships WHERE workspace = ? AND agent = ? ORDER BY channel').all(caller.workspace, caller.agent) as {
      channel: string;
    }[]
  ).map((row) => row.channel);
  throw new TaskServiceError(404, 'channel_not_found', `No board "${channel}" among this agent's boards.`, { details: { channels } });
}

/** Reserves `count` consecutive numbers of the board; inside the caller's transaction, so a rollback gives them back. */
export function allocateNumbers(store: Store, workspace: string, channel: string, count: number): number {
  const row = store
    .sql('UPDATE channels SET next_number = next_number + ? WHERE workspace = ? AND name = ? RETURNING next_number')
    .get(count, workspace, channel) as { next_number: number };
  return row.next_number - count;
}
