import type { WorkerOptions } from '@temporalio/worker';
import { buildIdOf } from './buildId';
import type { VersioningConfig } from './config';
import type { Version } from './promote';

/**
 * The deployment options every worker of one process shares (the main queue,
 * the token registry's, the host's), so that each queue it polls belongs to
 * its version: a version's workflows, and the activities they send to any of
 * these queues, then reach this code and no other.
 */
export function workerVersioning(config: VersioningConfig, bundleCode: string | Buffer): { version?: Version; options: Pick<WorkerOptions, 'workerDeploymentOptions'> } {
  if (!config.enabled) return { options: {} };
  const version = { deploymentName: config.deploymentName, buildId: config.buildId ?? buildIdOf(bundleCode) };
  // Each workflow type says how it moves (workflows/versioning.ts); this default is for a type that forgot to.
  return { version, options: { workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' } } };
}
