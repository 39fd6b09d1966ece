/**
 * Worker Versioning settings (docs/decisions.md, "Versions of the workflow
 * code"). Read once by loadConfig like every other setting.
 */
export interface VersioningConfig {
  /** false (DIPPER_WORKER_VERSIONING=off): unversioned workers, for a Temporal server without Worker Deployments. */
  enabled: boolean;
  /** DIPPER_DEPLOYMENT_NAME; by default the task queue's name ('.' becomes '_', which a deployment name may not hold). */
  deploymentName: string;
  /** DIPPER_BUILD_ID; absent: the package version and a digest of the workflow bundle (src/versioning/buildId.ts). */
  buildId?: string;
  /**
   * DIPPER_PROMOTE_VERSION: when a worker makes its version the deployment's current one.
   * `newer` (the default): unless a build first seen after its own is current, or its own was current once and an
   * operator moved away from it. `always`: whatever is current (`dipper up`, whose worker is its stack's only one).
   * `never`: the operator promotes (`temporal worker deployment set-current-version`).
   */
  promote: PromoteMode;
}

export type PromoteMode = 'newer' | 'always' | 'never';

type Env = Record<string, string | undefined>;

/** A switch read from the environment: `on` or `off`, the fallback when unset or empty. One reader for every such setting. */
export function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'on' && raw !== 'off') throw new Error(`${name} must be on or off, got "${raw}"`);
  return raw === 'on';
}

export function versioningOf(env: Env, taskQueue: string): VersioningConfig {
  const enabled = onOff(env, 'DIPPER_WORKER_VERSIONING', true);
  const deploymentName = env.DIPPER_DEPLOYMENT_NAME || taskQueue.replaceAll('.', '_');
  // The server refuses '.' and ':' in a deployment name and a leading '__' in either part of a version.
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(deploymentName) || deploymentName.startsWith('__')) {
    throw new Error(`DIPPER_DEPLOYMENT_NAME must be 1-100 letters, digits, '_' or '-', not starting with '__', got "${deploymentName}"`);
  }
  const buildId = env.DIPPER_BUILD_ID || undefined;
  if (buildId !== undefined && (!/^[A-Za-z0-9._+-]{1,100}$/.test(buildId) || buildId.startsWith('__'))) {
    throw new Error(`DIPPER_BUILD_ID must be 1-100 letters, digits, '.', '_', '+' or '-', not starting with '__', got "${buildId}"`);
  }
  const promote = (env.DIPPER_PROMOTE_VERSION || 'newer') as PromoteMode;
  if (!['newer', 'always', 'never'].includes(promote)) throw new Error(`DIPPER_PROMOTE_VERSION must be newer, always or never, got "${promote}"`);
  return { enabled, deploymentName, buildId, promote };
}
