import { Connection, isGrpcServiceError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { sdkTls, type TemporalTarget } from './tls';

// gRPC status codes; named here rather than pulling in @grpc/grpc-js for two numbers.
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

// temporal.api.enums.v1 TaskQueueKind.NORMAL and TaskQueueType.WORKFLOW; wire values never change.
const NORMAL_KIND = 1;
const WORKFLOW_TYPE = 1;

type RegisterRequest = Parameters<Connection['workflowService']['registerNamespace']>[0];
type Retention = NonNullable<RegisterRequest['workflowExecutionRetentionPeriod']>;

/**
 * The server's own management, kept apart from workflow operations (the
 * Temporal class): whether a server answers, its namespaces and search
 * attributes, who polls a queue. Used by code that starts or checks servers
 * (devstack, cluster, the worker healthcheck), which has no namespace to
 * work in yet and no workflow to reach.
 */
export class TemporalAdmin {
  private constructor(private readonly connection: Connection) {}

  /** `to`: an address (a server Dipper started, plain gRPC), or a target with its TLS. */
  static async connect(to: string | TemporalTarget, connectTimeout?: Duration): Promise<TemporalAdmin> {
    const target = typeof to === 'string' ? { address: to } : to;
    return new TemporalAdmin(await Connection.connect({ address: target.address, ...sdkTls(target.tls), ...(connectTimeout !== undefined ? { connectTimeout } : {}) }));
  }

  /** Opens a connection, runs fn, closes it. */
  static async with<T>(to: string | TemporalTarget, connectTimeout: Duration | undefined, fn: (admin: TemporalAdmin) => Promise<T>): Promise<T> {
    const admin = await TemporalAdmin.connect(to, connectTimeout);
    try {
      return await fn(admin);
    } finally {
      await admin.close();
    }
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** Throws unless the frontend answers. */
  async systemInfo(): Promise<void> {
    await this.connection.workflowService.getSystemInfo({});
  }

  /** The server's release, as it reports it ("1.32.0"). */
  async serverVersion(): Promise<string> {
    const info = await this.connection.workflowService.getClusterInfo({});
    return info.serverVersion ?? '';
  }

  /** Whether the namespace exists (false on NOT_FOUND; other failures throw). */
  async hasNamespace(namespace: string): Promise<boolean> {
    try {
      await this.connection.workflowService.describeNamespace({ namespace });
      return true;
    } catch (err) {
      if (isGrpcServiceError(err) && err.code === NOT_FOUND) return false;
      throw err;
    }
  }

  /** Registers a namespace; one that exists already is left alone. */
  async registerNamespace(namespace: string, retentionSeconds: number): Promise<void> {
    // protobufjs encodes a plain number into an int64; the generated type only names Long.
    const retention = { seconds: retentionSeconds } as unknown as Retention;
    await ignoring(ALREADY_EXISTS, () => this.connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: retention }));
  }

  async searchAttributeNames(namespace: string): Promise<Set<string>> {
    const { customAttributes } = await this.connection.operatorService.listSearchAttributes({ namespace });
    return new Set(Object.keys(customAttributes ?? {}));
  }

  /** Adds search attributes by indexed value type (temporal.api.enums.v1.IndexedValueType); existing ones are left alone. */
  async addSearchAttributes(namespace: string, attributes: Record<string, number>): Promise<void> {
    await ignoring(ALREADY_EXISTS, () => this.connection.operatorService.addSearchAttributes({ namespace, searchAttributes: attributes }));
  }

  /** How many workers poll a workflow task queue (the server forgets a poller minutes after its last poll). */
  async workflowPollers(namespace: string, taskQueue: string): Promise<number> {
    const { pollers } = await this.connection.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue, kind: NORMAL_KIND },
      taskQueueType: WORKFLOW_TYPE,
    });
    return pollers?.length ?? 0;
  }

  /** A worker deployment: what the server knows of it and the token a change must name; undefined before any poller reached the server. */
  async describeDeployment(namespace: string, deploymentName: string): Promise<{ info: DeploymentInfo | undefined; conflictToken: Uint8Array | null | undefined } | undefined> {
    try {
      const d = await this.connection.workflowService.describeWorkerDeployment({ namespace, deploymentName });
      return { info: d.workerDeploymentInfo ?? undefined, conflictToken: d.conflictToken };
    } catch (err) {
      if (isGrpcServiceError(err) && err.code === NOT_FOUND) return undefined;
      throw err;
    }
  }

  /** Makes a build the deployment's current version, if the deployment is still as `conflictToken` saw it; returns the build it replaced. */
  async setCurrentVersion(o: { namespace: string; deploymentName: string; buildId: string; conflictToken: Uint8Array | null | undefined; identity: string }): Promise<string | undefined> {
    const set = await this.connection.workflowService.setWorkerDeploymentCurrentVersion(o);
    return set.previousDeploymentVersion?.buildId ?? undefined;
  }
}

/** Whether err is the server's NOT_FOUND (a namespace not yet in its cache). */
export const isNotFoundStatus = (err: unknown): boolean => isGrpcServiceError(err) && err.code === NOT_FOUND;

async function ignoring(code: number, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === code)) throw err;
  }

}

export type DeploymentInfo = temporal.api.deployment.v1.IWorkerDeploymentInfo;

