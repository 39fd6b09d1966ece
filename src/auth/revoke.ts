import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { DipperConfig } from '../config';
import { revokeSignal, tokenRegistryId, tokenRegistryQueue, tokenRegistryWorkflow, type Revocation } from '../../workflows/tokens/registry';

/** Records a revocation with the task queue's token registry, starting the registry if it is not running. */
export async function recordRevocation(client: Client, config: Pick<DipperConfig, 'temporal' | 'tokenTtlSeconds'>, revocation: Revocation): Promise<void> {
  await client.workflow.signalWithStart(tokenRegistryWorkflow, {
    taskQueue: tokenRegistryQueue(config.temporal.taskQueue),
    workflowId: tokenRegistryId(config.temporal.taskQueue),
    args: [{ tokenTtlSeconds: config.tokenTtlSeconds }],
    signal: revokeSignal,
    signalArgs: [revocation],
  });
}

/**
 * At worker start: the registry exists before any revocation needs it.
 * Started by the first revocation instead, gateways querying it in that
 * moment met an instance no worker had run yet and stalled a refresh. An
 * existing registry is left alone: a signal to it would queue a workflow
 * task on the sticky queue of a worker that may just have died, and hold
 * every gateway's Query behind it until the sticky timeout.
 */
export async function ensureTokenRegistry(client: Client, config: Pick<DipperConfig, 'temporal' | 'tokenTtlSeconds'>): Promise<void> {
  try {
    await client.workflow.start(tokenRegistryWorkflow, {
      taskQueue: tokenRegistryQueue(config.temporal.taskQueue),
      workflowId: tokenRegistryId(config.temporal.taskQueue),
      args: [{ tokenTtlSeconds: config.tokenTtlSeconds }],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
