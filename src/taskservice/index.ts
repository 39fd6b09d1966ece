import { serveApp, type ServedApp } from '../common/serveApp';
import { openSqlite } from '../common/stores/sqlite';
import { createTaskServiceApp } from './app';

export { createTaskServiceApp, type TaskServiceAppOptions } from './app';

export interface TaskServiceOptions {
  dbFile: string;
  /** Default 127.0.0.1: the service trusts its network no more than its tokens, but has no reason to be reachable. */
  host?: string;
  /** 0 (the default) takes any free port; the answer's url says which. */
  port?: number;
  adminKey: string;
  tokenTtlSeconds?: number;
  refreshTtlSeconds?: number;
  /** For token-expiry tests only. */
  now?: () => number;
  log?: (line: string) => void;
}

export interface RunningTaskService {
  url: string;
  close(): Promise<void>;
}

/** Opens (or creates) the database and serves the Task service over HTTP until close(). */
export async function startTaskService(opts: TaskServiceOptions): Promise<RunningTaskService> {
  const db = openSqlite(opts.dbFile);
  let served: ServedApp;
  try {
    served = await serveApp(createTaskServiceApp({ ...opts, db }), opts);
  } catch (err) {
    db.close();
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    url: served.url,
    close() {
      closing ??= served.close().finally(() => db.close());
      return closing;
    },
  };
}
