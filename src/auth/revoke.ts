import type { Client } from '@temporalio/client';
import type { DipperConfig } from '../config';
import { wakeSignal } from '../../workflows/interceptors';
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

/**
 * At worker start: the registry exists and has run a workflow task on a
 * live worker before any revocation needs it. Started by the first
 * revocation instead, gateways querying it in that moment reached an
 * instance no worker had run yet, were refused (QUERY_COLD) and stalled for
 * their whole refresh deadline: a revoked token accepted for up to 2 s.
 */
export async function wakeTokenRegistry(client: Client, config: Pick<DipperConfig, 'temporal' | 'tokenTtlSeconds'>): Promise<void> {
  await client.workflow.signalWithStart(tokenRegistryWorkflow, {
    taskQueue: config.temporal.taskQueue,
    workflowId: tokenRegistryId(config.temporal.taskQueue),
    args: [{ tokenTtlSeconds: config.tokenTtlSeconds }],
    signal: wakeSignal,
    signalArgs: [],
  });
}
