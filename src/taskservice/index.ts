import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSqlite } from '../../activities/sqlite';
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
  let server: http.Server;
  try {
    server = http.createServer(createTaskServiceApp({ ...opts, db }));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    db.close();
    throw err;
  }
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        // Keep-alive connections would hold close() open until they time out; requests are synchronous, so none is mid-write.
        server.close(() => resolve());
        server.closeAllConnections();
      }).finally(() => db.close());
      return closing;
    },
  };
}
