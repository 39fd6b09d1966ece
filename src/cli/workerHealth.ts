import { Connection } from '@temporalio/client';
import { type DipperConfig, temporalAddress } from '../config';

// temporal.api.enums.v1 TaskQueueKind.NORMAL and TaskQueueType.WORKFLOW; wire values never change.
const NORMAL_KIND = 1;
const WORKFLOW_TYPE = 1;

/**
 * Whether some worker polls Dipper's task queue: the container healthcheck
 * for the worker, which has no port to probe. The server forgets a poller a
 * few minutes after its last poll, so a dead worker turns unhealthy late.
 */
export async function workerIsPolling(config: DipperConfig): Promise<boolean> {
  const connection = await Connection.connect({ address: temporalAddress(config), connectTimeout: '5s' });
  try {
    const { pollers } = await connection.workflowService.describeTaskQueue({
      namespace: config.temporal.namespace,
      taskQueue: { name: config.temporal.taskQueue, kind: NORMAL_KIND },
      taskQueueType: WORKFLOW_TYPE,
    });
    return (pollers?.length ?? 0) > 0;
  } finally {
    await connection.close();
  }
}
