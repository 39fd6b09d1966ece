import { WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition, SignalDefinition, UpdateDefinition, Workflow, WorkflowResultType } from '@temporalio/common';
import { wakeSignal } from '../common/pure/queryGuard';
import type { Calls } from './policy';

export type WorkflowDescription = Awaited<ReturnType<WorkflowHandle['describe']>>;
export type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** An Update accepted by its workflow, whose result may still be coming. */
export interface AcceptedUpdate<Ret> {
  readonly updateId: string;
  result(): Promise<Ret>;
}

/**
 * One workflow execution, reached only through its definitions: Queries,
 * Updates and Signals are the `define*` values of its messages.ts, so a
 * renamed message is a compile error here, never a string that no longer
 * matches. Every method is made under the module's call policy
 * (policy.ts), and each attempt counts as one operation.
 */
export class WorkflowRef<W extends Workflow = Workflow> {
  constructor(
    private readonly sdk: WorkflowHandle<W>,
    private readonly calls: Calls,
  ) {}

  get workflowId(): string {
    return this.sdk.workflowId;
  }

  /** The first run of the execution a start began or attached to; unknown for a handle made by id. */
  get firstRunId(): string | undefined {
    return (this.sdk as { firstExecutionRunId?: string }).firstExecutionRunId;
  }

  /** A Query, asked again while a later attempt may be answered (policy.ts says when). */
  query<Ret, Args extends unknown[]>(def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    return this.calls.query(
      () => this.sdk.query(def, ...args),
      () => this.sdk.signal(wakeSignal),
    );
  }

  /** The Update's id is the caller's when it gives one: a repeat with the same id is answered, not applied again. */
  update<Ret, Args extends unknown[]>(def: UpdateDefinition<Ret, Args>, args: Args, updateId?: string): Promise<Ret> {
    // The SDK's overloads split on arity; the definition already ties args to the handler's type.
    const call = this.sdk.executeUpdate as (d: unknown, o: { args: unknown[]; updateId: string }) => Promise<Ret>;
    return this.calls.update('update', (id) => call.call(this.sdk, def, { args, updateId: id }), updateId);
  }

  /** An Update, answered once the workflow has accepted it (its validator passed); the result comes later. */
  startUpdate<Ret, Args extends unknown[]>(def: UpdateDefinition<Ret, Args>, args: Args, updateId: string): Promise<AcceptedUpdate<Ret>> {
    const call = this.sdk.startUpdate as (d: unknown, o: { args: unknown[]; updateId: string; waitForStage: typeof WorkflowUpdateStage.ACCEPTED }) => Promise<AcceptedUpdate<Ret>>;
    // The outcome is a wait its caller bounds by its own clock (an approval's send answers TIMEOUT, and the same call
    // again attaches to the same send), so it is not cut at the call's deadline here.
    return this.calls.update('startUpdate', (id) => call.call(this.sdk, def, { args, updateId: id, waitForStage: WorkflowUpdateStage.ACCEPTED }), updateId);
  }

  signal<Args extends unknown[]>(def: SignalDefinition<Args>, ...args: Args): Promise<void> {
    return this.calls.once('signal', () => this.sdk.signal(def, ...args));
  }

  describe(): Promise<WorkflowDescription> {
    return this.calls.once('describe', () => this.sdk.describe());
  }

  result(): Promise<WorkflowResultType<W>> {
    return this.calls.once('result', () => this.sdk.result());
  }

  terminate(reason?: string): Promise<void> {
    return this.calls.once('terminate', async () => void (await this.sdk.terminate(reason)));
  }

  cancel(): Promise<void> {
    return this.calls.once('cancel', async () => void (await this.sdk.cancel()));
  }

  fetchHistory(): Promise<History> {
    return this.calls.once('fetchHistory', () => this.sdk.fetchHistory());
  }
}
