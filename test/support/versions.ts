import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import type { Client, Connection } from '@temporalio/client';
import { QUERY_COLD, QUERY_REFUSED } from '../../src/common/pure/queryGuard';

const quiet = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, log: () => undefined };

/** Bundles a variant of the workflow code, as writeWorkflowBundle does today's. */
export async function writeVariantBundle(file: string, workflowsPath: string, interceptorModules: string[]): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: interceptorModules, logger: quiet });
  fs.writeFileSync(file, code);
}

export const DRAINED = temporal.api.enums.v1.VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED;
export const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;

const ms = (t: { seconds?: { toString(): string } | number | null; nanos?: number | null } | null | undefined) => Number(t?.seconds?.toString() ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** What a test reads of one Worker Deployment. */
export function deploymentOf(connection: Connection, namespace: string, deploymentName: string) {
  const service = connection.workflowService;
  return {
    async current(): Promise<string | undefined> {
      const d = await service.describeWorkerDeployment({ namespace, deploymentName }).catch(() => undefined);
      return d?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId || undefined;
    },
    /** When the current version became current, by the server's clock (as history event times are). */
    async currentSince(): Promise<number> {
      const d = await service.describeWorkerDeployment({ namespace, deploymentName });
      return ms(d.workerDeploymentInfo?.routingConfig?.currentVersionChangedTime);
    },
    async drainage(buildId: string): Promise<number | undefined> {
      const v = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId } });
      return v.workerDeploymentVersionInfo?.drainageInfo?.status ?? undefined;
    },
  };
}

/** Which build ran each workflow task of a history, in order, and how each said it moves. */
export async function taskVersions(client: Client, workflowId: string, runId?: string): Promise<{ buildId: string; behavior: number; at: number }[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const done = e.workflowTaskCompletedEventAttributes;
    if (!done) return [];
    return [{ buildId: done.deploymentVersion?.buildId ?? '', behavior: done.versioningBehavior ?? 0, at: ms(e.eventTime) }];
  });
}

/** Failed workflow tasks anywhere in a history: the trace a nondeterministic or broken task leaves. */
export async function failedTasks(client: Client, workflowId: string, runId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowTaskFailedEventAttributes)
    .filter((f) => f !== undefined && f !== null)
    // The server turned a completion down because new events had come in (a signal as the run ended): Temporal's own
    // race, after which it schedules a fresh task at once; nothing in the workflow failed.
    .filter((f) => f.cause !== UNHANDLED_COMMAND && f.failure?.message !== 'UnhandledCommand')
    .map((f) => f.failure?.message ?? String(f.cause))
    // A Query the guard refuses (workflows/interceptors.ts) fails its activation on purpose: the run is evicted and replayed
    // whole. The guard never fails a task's own work, but a Query that rides along a task may take that task with it.
    .filter((message) => !message.includes(QUERY_REFUSED) && !message.includes(QUERY_COLD));
}

/** WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND. */
const UNHANDLED_COMMAND = 1;
