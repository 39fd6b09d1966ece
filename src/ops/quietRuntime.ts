import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

/**
 * Installs an SDK runtime that logs nothing, for a process that replays
 * histories: replayAll's report already holds every verdict, and the SDK
 * would print each failing task again with its stack. Core's native log is
 * forwarded to the same silent logger instead of going to the console.
 * Does nothing when the process already has a runtime.
 */
export function installQuietRuntime(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR', () => undefined),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
    });
  } catch {
    // A runtime exists already (it can be installed once per process); its logging stays as it was.
  }
}
