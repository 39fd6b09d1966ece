import type Database from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import { TaskServiceError } from './errors';
import { taskServiceRoutes } from './routes';
import { migrate } from './schema';
import { createStore } from './store';
import { createTokens } from './tokens';

export interface TaskServiceAppOptions {
  /** An open database; the app brings its schema up to date and leaves closing it to the owner. */
  db: Database.Database;
  adminKey: string;
  tokenTtlSeconds?: number;
  refreshTtlSeconds?: number;
  /** The clock, in ms; tests move it to expire tokens. */
  now?: () => number;
  /** Where internal failures are reported: one line, never a token or a stack. */
  log?: (line: string) => void;
}

const HOUR = 3600;
const BODY_LIMIT = '1mb';

/** The Task service as an express app, for in-process use; startTaskService serves it over HTTP. */
export function createTaskServiceApp(opts: TaskServiceAppOptions): express.Express {
  if (!opts.adminKey) throw new Error('the task service needs an admin key');
  migrate(opts.db);
  const store = createStore(opts.db, opts.now);
  const tokens = createTokens(store, {
    adminKey: opts.adminKey,
    tokenTtlSeconds: opts.tokenTtlSeconds ?? HOUR,
    refreshTtlSeconds: opts.refreshTtlSeconds ?? 30 * 24 * HOUR,
  });
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const app = express();
  app.disable('x-powered-by');
  // Plain query strings: a repeated parameter becomes an array (and is refused), never a nested object.
  app.set('query parser', 'simple');
  app.use(express.json({ limit: BODY_LIMIT }));
  app.use(taskServiceRoutes(store, tokens));
  app.use((req: Request) => {
    throw new TaskServiceError(404, 'not_found', `No route ${req.method} ${req.path}.`);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const failure = asServiceError(err);
    if (failure.status >= 500) {
      log(`task service: ${req.method} ${req.route?.path ?? req.path} failed: ${err instanceof Error ? `${err.name}: ${err.message}` : 'unknown error'}`);
    }
    if (res.headersSent) return;
    if (failure.status === 401) res.set('WWW-Authenticate', 'Bearer');
    res.status(failure.status).json(failure.body());
  });
  return app;
}

/** Body-parser failures are the caller's; anything else unforeseen is ours and says nothing more than "internal". */
function asServiceError(err: unknown): TaskServiceError {
  if (err instanceof TaskServiceError) return err;
  const e = err as { type?: string; status?: number };
  if (e.type === 'entity.parse.failed') return new TaskServiceError(400, 'invalid_input', 'The body is not valid JSON.');
  if (e.type === 'entity.too.large') return new TaskServiceError(413, 'payload_too_large', `The body is larger than ${BODY_LIMIT}.`);
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new TaskServiceError(e.status, 'invalid_input', 'The request body could not be read.');
  }
  return new TaskServiceError(500, 'internal', 'Internal error.');
}
