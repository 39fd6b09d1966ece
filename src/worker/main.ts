import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config';
import { createLogger, safeMessage } from '../log';
import { createDipperWorker } from './worker';

async function main(): Promise<void> {
  const config = loadConfig();
  // The SDK's own log (bundler output, state changes) only when debugging. Its entries go through Dipper's
  // logger with Temporal's internal run ids left out.
  const sdkLog = createLogger(config, 'temporal-sdk');
  Runtime.install({
    logger: new DefaultLogger(config.logLevel === 'debug' ? 'INFO' : 'WARN', (entry) => {
      const { runId: _runId, error, ...meta } = (entry.meta ?? {}) as Record<string, unknown>;
      const fields = { ...meta, ...(error === undefined ? {} : { err: safeMessage(error) }) };
      const level = entry.level === 'ERROR' ? 'error' : entry.level === 'WARN' ? 'warn' : 'info';
      sdkLog[level](fields, safeMessage(entry.message));
    }),
  });
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
