import { keepFilesPrivate } from '../private';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config';
import { createLogger } from '../log';
import { sdkLine } from './sdkLog';
import { loopbackPort } from './metricsServer';
import { createDipperWorker } from './worker';
import { tellStarted } from '../common/ready';

async function main(): Promise<void> {
  keepFilesPrivate();
  const config = loadConfig();
  // The SDK's own log (bundler output, state changes) only when debugging. Its entries go through Dipper's
  // logger with Temporal's internal run ids left out.
  const sdkLog = createLogger(config, 'temporal-sdk');
  // The SDK core's metrics (workflow task latency and failures, slots, polls), read by the worker's own page.
  const corePort = config.workerMetricsPort !== undefined ? await loopbackPort() : undefined;
  Runtime.install({
    // Dipper's own handler below is the one that stops the worker: two handlers would shut it down twice,
    // and the second call throws (IllegalStateError: Not running).
    shutdownSignals: [],
    telemetryOptions: {
      // Through the logger below, as the SDK's own entries are: without it the core writes to stderr itself.
      logging: { forward: {} },
      ...(corePort !== undefined ? { metrics: { prometheus: { bindAddress: `127.0.0.1:${corePort}`, countersTotalSuffix: true, useSecondsForDurations: true } } } : {}),
    },
    logger: new DefaultLogger(config.logLevel === 'debug' ? 'INFO' : 'WARN', (entry) => {
      const line = sdkLine(entry);
      sdkLog[line.level](line.fields, line.msg);
    }),
  });
  const log = createLogger(config, 'worker');
  const worker = await createDipperWorker(config, { workflowBundlePath: process.env.DIPPER_WORKFLOW_BUNDLE || undefined, log, onStarted: tellStarted, corePort });
  // Once, whatever the signals: SIGINT and SIGTERM can both arrive (a terminal's Ctrl-C, then a supervisor's stop).
  let stopping = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (stopping) return;
      stopping = true;
      void worker.shutdown();
    });
  }
  log.info({ taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace }, 'worker running');
  if (Object.keys(config.faults).length > 0) log.warn({ faults: config.faults }, 'activities fail on purpose (DIPPER_FAULTS): a test setting');
  await worker.run();
  log.info('worker stopped');
}

main().catch((err: unknown) => {
  process.stderr.write(`dipper worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
