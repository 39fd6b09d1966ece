import type { Client } from '@temporalio/client';
import type { DipperConfig } from '../config';
import { revokeSignal, tokenRegistryId, tokenRegistryWorkflow, type Revocation } from '../../workflows/tokens/registry';

/** Records a revocation with the task queue's token registry, starting the registry if it is not running. */
export async function recordRevocation(client: Client, config: Pick<DipperConfig, 'temporal' | 'tokenTtlSeconds'>, revocation: Revocation): Promise<void> {
  await client.workflow.signalWithStart(tokenRegistryWorkflow, {
    taskQueue: config.temporal.taskQueue,
    workflowId: tokenRegistryId(config.temporal.taskQueue),
    args: [{ tokenTtlSeconds: config.tokenTtlSeconds }],
    signal: revokeSignal,
    signalArgs: [revocation],
  });
}
