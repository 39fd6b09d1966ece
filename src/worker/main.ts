import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config';
import { createLogger } from '../log';
import { createDipperWorker } from './worker';

async function main(): Promise<void> {
  const config = loadConfig();
  // The SDK's own log (bundler output, state changes) only when debugging; Dipper's log says what matters.
  Runtime.install({ logger: new DefaultLogger(config.logLevel === 'debug' ? 'INFO' : 'WARN') });
  const log = createLogger(config, 'worker');
  const worker = await createDipperWorker(config, { workflowBundlePath: process.env.DIPPER_WORKFLOW_BUNDLE || undefined });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void worker.shutdown());
  log.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace }, 'worker running');
  await worker.run();
  log.info('worker stopped');
}

main().catch((err: unknown) => {
  process.stderr.write(`dipper worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
