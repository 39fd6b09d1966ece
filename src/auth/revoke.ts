import type { DipperConfig } from '../config';
import { isAlreadyStarted, type Temporal } from '../temporal';
import { revokeSignal, tokenRegistryId, tokenRegistryQueue, type Revocation } from '../../workflows/tokens/messages';
import { tokenRegistryWorkflow } from '../../workflows/tokens/registry';

type RegistryConfig = Pick<DipperConfig, 'temporal' | 'tokenTtlSeconds'>;

/** Where and how the task queue's registry starts, whoever starts it. */
function registryStart(config: RegistryConfig) {
  return {
    taskQueue: tokenRegistryQueue(config.temporal.taskQueue),
    workflowId: tokenRegistryId(config.temporal.taskQueue),
    args: [{ tokenTtlSeconds: config.tokenTtlSeconds }] as [{ tokenTtlSeconds: number }],
  };
}

/** Records a revocation with the task queue's token registry, starting the registry if it is not running. */
export async function recordRevocation(temporal: Temporal, config: RegistryConfig, revocation: Revocation): Promise<void> {
  await temporal.signalWithStart(tokenRegistryWorkflow, revokeSignal, [revocation], registryStart(config));
}

/**
 * At worker start: the registry exists before any revocation needs it, so
 * no gateway's refresh meets it in the moment it is created. An existing
 * registry is left as it is.
 */
export async function ensureTokenRegistry(temporal: Temporal, config: RegistryConfig): Promise<void> {
  try {
    await temporal.start(tokenRegistryWorkflow, registryStart(config));
  } catch (err) {
    if (!isAlreadyStarted(err)) throw err;
  }
}
