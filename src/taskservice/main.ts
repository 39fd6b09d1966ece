import path from 'node:path';
import { keepFilesPrivate } from '../private';
import { startTaskService } from './index';
import { tellStarted } from '../common/ready';

/** The Task service on its own: `tsx src/taskservice/main.ts`, configured by the environment alone. */
async function main(): Promise<void> {
  keepFilesPrivate();
  const env = process.env;
  const adminKey = env.DIPPER_TASK_ADMIN_KEY;
  if (!adminKey) throw new Error('DIPPER_TASK_ADMIN_KEY is required');
  const port = Number(env.DIPPER_TASK_SERVICE_PORT ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`DIPPER_TASK_SERVICE_PORT must be a port number, got "${env.DIPPER_TASK_SERVICE_PORT}"`);
  const service = await startTaskService({
    dbFile: env.DIPPER_TASK_SERVICE_DB ?? path.resolve(env.DIPPER_DATA_DIR ?? '.dipper', 'tasks.db'),
    host: env.DIPPER_TASK_SERVICE_HOST ?? '127.0.0.1',
    port,
    adminKey,
  });
  process.stdout.write(`task service listening on ${service.url}\n`);
  tellStarted();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      void service.close().then(() => process.exit(0));
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`task service failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
