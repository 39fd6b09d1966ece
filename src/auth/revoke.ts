import type { DipperConfig } from '../config';
import type { RevokedTokens } from '../common/stores/revokedTokens';
import { isAlreadyStarted, type Temporal } from '../temporal';
import { revokeSignal, tokenRegistryId, tokenRegistryQueue, type Revocation, type TokenRegistryInput } from '../common/pure/revocations';

type RegistryConfig = Pick<DipperConfig, 'temporal' | 'tokenTtlSeconds'>;

/**
 * The token registry workflow (workflows/tokens/registry.ts), handed in by the caller: src/auth sits below
 * workflows/ and imports nothing from it (docs/architecture.md, "Layers").
 */
export type TokenRegistryWorkflow = (input: TokenRegistryInput) => Promise<void>;

/** Where and how the task queue's registry starts, whoever starts it. */
function registryStart(config: RegistryConfig) {
  return {
    taskQueue: tokenRegistryQueue(config.temporal.taskQueue),
    workflowId: tokenRegistryId(config.temporal.taskQueue),
    args: [{ tokenTtlSeconds: config.tokenTtlSeconds }] as [{ tokenTtlSeconds: number }],
  };
}

/**
 * Records a revocation: first in the shared store, which every replica reads
 * at each check (it holds once this returns), then with the task queue's
 * token registry (starting it if it is not running), whose copy each
 * replica keeps as a fast path.
 */
export async function recordRevocation(
  temporal: Temporal,
  registry: TokenRegistryWorkflow,
  config: RegistryConfig,
  revoked: RevokedTokens,
  revocation: Revocation,
): Promise<void> {
  await revoked.record(revocation, keepAfter(config));
  await temporal.signalWithStart(registry, revokeSignal, [revocation], registryStart(config));
}

/** Entries recorded before this (ms since the epoch) cover only tokens that have expired. */
export const keepAfter = (config: Pick<DipperConfig, 'tokenTtlSeconds'>, now = Date.now()): number => now - config.tokenTtlSeconds * 1000;

/**
 * At worker start: the registry exists before any revocation needs it, so
 * no gateway's refresh meets it in the moment it is created. An existing
 * registry is left as it is.
 */
export async function ensureTokenRegistry(temporal: Temporal, registry: TokenRegistryWorkflow, config: RegistryConfig): Promise<void> {
  try {
    await temporal.start(registry, registryStart(config));
  } catch (err) {
    if (!isAlreadyStarted(err)) throw err;
  }
}
