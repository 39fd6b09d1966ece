import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  makeGrpcRetryInterceptor,
  type WorkflowExecutionInfo,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Duration, SignalDefinition, UpdateDefinition, Workflow, WorkflowResultType } from '@temporalio/common';
import { sdkTls, type TemporalTls } from './tls';
import type { temporal } from '@temporalio/proto';
import type { ProcessMetrics } from '../metrics/temporalCalls';
import { counter } from './counted';
import { WorkflowRef } from './handle';
import { Calls, type CallPolicy } from './policy';
import { grpcRetryOptions } from './retry';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../common/pure/limits';

export type WorkflowSummary = WorkflowExecutionInfo;

export type StartOptions<W extends Workflow> = WorkflowStartOptions<W>;
type ListRequest = temporal.api.workflowservice.v1.IListWorkflowExecutionsRequest;
type ListResponse = temporal.api.workflowservice.v1.IListWorkflowExecutionsResponse;
type ResetRequest = temporal.api.workflowservice.v1.IResetWorkflowExecutionRequest;
type HistoryPage = temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryReverseResponse;

export interface ConnectOptions {
  address: string;
  /** Mutual TLS, toward a server that requires it (src/temporal/tls.ts). */
  tls?: TemporalTls;
  namespace: string;
  /** Counts every RPC attempt by method and every operation here; a process without metrics (the CLI) counts nothing. */
  metrics?: ProcessMetrics;
  channelArgs?: Record<string, number | string>;
  connectTimeout?: Duration;
  /** The workflow task timeout of every workflow started here (DIPPER_WORKFLOW_TASK_TIMEOUT_MS; src/common/pure/limits.ts says why). */
  workflowTaskTimeoutMs?: number;
  /** Deadlines and the Query cap of every call made over this connection (policy.ts). */
  policy?: CallPolicy;
}

/**
 * Dipper's one path to Temporal as a client: it owns the connection and the
 * SDK client, and offers typed operations only. A workflow is started by
 * its function (imported from workflows/, so the type name is the
 * function's own and its arguments are checked), and Queries, Updates and
 * Signals by their definitions (WorkflowRef). Every operation is made
 * under the connection's call policy (policy.ts: the caller's deadline, the
 * Query cap, the one retry layer), so no caller reaches Temporal without
 * it, and each attempt is counted (ProcessMetrics.operations). The error
 * map that names failures for each surface is errors.ts.
 */
export class Temporal {
  private readonly calls: Calls;

  private constructor(
    private readonly client: Client,
    readonly namespace: string,
    metrics: ProcessMetrics | undefined,
    policy: CallPolicy,
    private readonly connection?: Connection,
    private readonly taskTimeoutMs = WORKFLOW_TASK_TIMEOUT_MS,
  ) {
    this.calls = new Calls(policy, counter(metrics), (deadline, fn) => client.withDeadline(deadline, fn));
  }

  /** The policy every call here is made under. */
  get policy(): CallPolicy {
    return this.calls.policy;
  }

  /** Every workflow Dipper starts gets Dipper's workflow task timeout, unless the caller names one; children inherit it. */
  private withTaskTimeout<O extends { workflowTaskTimeout?: Duration }>(options: O): O {
    return { workflowTaskTimeout: this.taskTimeoutMs, ...options };
  }

  static async connect(o: ConnectOptions): Promise<Temporal> {
    const connection = await Connection.connect({
      address: o.address,
      ...sdkTls(o.tls),
      // Temporal's own retries first (a short wait for a busy workflow: retry.ts), then the count, so each attempt counts.
      interceptors: [makeGrpcRetryInterceptor(grpcRetryOptions()), ...(o.metrics ? [o.metrics.rpcCounter()] : [])],
      ...(o.channelArgs ? { channelArgs: o.channelArgs } : {}),
      ...(o.connectTimeout !== undefined ? { connectTimeout: o.connectTimeout } : {}),
    });
    return new Temporal(new Client({ connection, namespace: o.namespace }), o.namespace, o.metrics, o.policy ?? {}, connection, o.workflowTaskTimeoutMs);
  }

  /** Operations over a client someone else opened and closes (tests hold their own). */
  static over(client: Client, metrics?: ProcessMetrics, policy: CallPolicy = {}): Temporal {
    return new Temporal(client, client.options.namespace, metrics, policy);
  }

  /** Closes the connection this module opened (one passed to `over` is its owner's to close). */
  async close(): Promise<void> {
    await this.connection?.close();
  }

  handle<W extends Workflow = Workflow>(workflowId: string, runId?: string): WorkflowRef<W> {
    return new WorkflowRef(this.client.workflow.getHandle<W>(workflowId, runId), this.calls);
  }

  async start<W extends Workflow>(workflow: W, options: StartOptions<W>): Promise<WorkflowRef<W>> {
    const started = await this.calls.once('start', () => this.client.workflow.start(workflow, this.withTaskTimeout(options)));
    return new WorkflowRef(started, this.calls);
  }

  /** Start (or attach, by the options' conflict policy) and wait for the result. */
  execute<W extends Workflow>(workflow: W, options: StartOptions<W>): Promise<WorkflowResultType<W>> {
    return this.calls.once('execute', () => this.client.workflow.execute(workflow, this.withTaskTimeout(options)));
  }

  /** One round trip: the Signal, and the workflow started first if it is not running. */
  async signalWithStart<W extends Workflow, SA extends unknown[]>(workflow: W, signal: SignalDefinition<SA>, signalArgs: SA, options: StartOptions<W>): Promise<WorkflowRef<W>> {
    const call = this.client.workflow.signalWithStart as (w: W, o: unknown) => ReturnType<Client['workflow']['signalWithStart']>;
    const handle = await this.calls.once('signalWithStart', () => call.call(this.client.workflow, workflow, { ...this.withTaskTimeout(options), signal, signalArgs }));
    return new WorkflowRef(handle as never, this.calls);
  }

  /**
   * One round trip: the workflow started if it is not running (`conflict`
   * says what a running one means), and the Update applied to it; answers
   * once the Update has completed.
   */
  async updateWithStart<W extends Workflow, Ret, Args extends unknown[]>(
    workflow: W,
    options: StartOptions<W> & { workflowIdConflictPolicy: 'USE_EXISTING' | 'FAIL' },
    update: UpdateDefinition<Ret, Args>,
    args: Args,
    updateId?: string,
  ): Promise<Ret> {
    const startWorkflowOperation = new WithStartWorkflowOperation(workflow, this.withTaskTimeout(options));
    // Not sent again: a start operation is used once (a retry would need a new one; none has been needed).
    return this.calls.once('updateWithStart', () =>
      this.client.workflow.executeUpdateWithStart(update, { args, startWorkflowOperation, ...(updateId === undefined ? {} : { updateId }) }),
    );
  }

  /** Visibility: every execution the query matches, paged by the SDK. */
  list(query?: string, pageSize?: number): AsyncGenerator<WorkflowSummary> {
    return this.calls.pages('list', this.client.workflow.list({ ...(query ? { query } : {}), ...(pageSize ? { pageSize } : {}) }));
  }

  /** Visibility, one page at a time, with the server's own page token (the operator API's run list). */
  listPage(request: Omit<ListRequest, 'namespace'>): Promise<ListResponse> {
    return this.calls.once('listPage', () => this.client.workflowService.listWorkflowExecutions({ ...request, namespace: this.namespace }));
  }

  async count(query: string): Promise<number> {
    return this.calls.once('count', async () => (await this.client.workflow.count(query)).count);
  }

  /** The newest events of a workflow's history, newest first; by `deadline` when given (a failure's diagnosis), else the call's. */
  historyReverse(workflowId: string, maximumPageSize: number, deadline?: number): Promise<HistoryPage> {
    return this.calls.once(
      'historyReverse',
      () => this.client.workflowService.getWorkflowExecutionHistoryReverse({ namespace: this.namespace, execution: { workflowId }, maximumPageSize }),
      deadline === undefined ? undefined : { end: deadline, rpc: deadline, diagnosis: deadline },
    );
  }

  /** Resets a workflow to a workflow task (the doctor's repair); answers the new run's id. */
  async reset(request: Omit<ResetRequest, 'namespace'>): Promise<string> {
    const res = await this.calls.once('reset', () => this.client.workflowService.resetWorkflowExecution({ ...request, namespace: this.namespace }));
    return res.runId ?? '';
  }
}

/** A visibility filter on a workflow type, named by its function: `WorkflowType = 'runWorkflow'`. */
export function typeIs(workflow: Workflow): string {
  return `WorkflowType = '${workflow.name}'`;
}
