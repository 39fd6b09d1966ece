import type { WorkflowSummary as WorkflowExecutionInfo } from '../temporal';

/**
 * The build a workflow is pinned to when that is not `buildId`, else
 * undefined. Such a workflow runs only on its own build's workers: replaying
 * it with other code says nothing about it, and resetting it on that
 * verdict would break what its version keeps whole. Read from visibility,
 * where a listed workflow carries it (its versioning info does not come with
 * the list); the version is `<deployment>:<build>` (`.` on older servers),
 * and a deployment name holds neither.
 */
export function pinnedElsewhere(wf: WorkflowExecutionInfo, buildId: string | undefined): string | undefined {
  const attrs = wf.searchAttributes ?? {};
  if (!buildId || attrs.TemporalWorkflowVersioningBehavior?.[0] !== 'Pinned') return undefined;
  const version = String(attrs.TemporalWorkerDeploymentVersion?.[0] ?? '');
  const pinned = version.slice(version.search(/[.:]/) + 1);
  return pinned && pinned !== buildId ? pinned : undefined;
}
