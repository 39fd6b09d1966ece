import { type DipperConfig, temporalTarget } from '../config';
import { TemporalAdmin } from '../temporal';

/**
 * Whether some worker polls Dipper's task queue: the container healthcheck
 * for the worker, which has no port to probe. The server forgets a poller a
 * few minutes after its last poll, so a dead worker turns unhealthy late.
 */
export async function workerIsPolling(config: DipperConfig): Promise<boolean> {
  return TemporalAdmin.with(temporalTarget(config), '5s', async (admin) => (await admin.workflowPollers(config.temporal.namespace, config.temporal.taskQueue)) > 0);
}
