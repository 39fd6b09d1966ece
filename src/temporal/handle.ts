import { WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition, SignalDefinition, UpdateDefinition, Workflow, WorkflowResultType } from '@temporalio/common';
import { QUERY_COLD, wakeSignal } from '../common/pure/queryGuard';
import type { Counted } from './counted';

/** Queries to a cold workflow, the wake between them included: about 1.5 s of waiting at most. */
const COLD_ATTEMPTS = 5;

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
 * matches. Every method counts as one operation of the module.
 */
export class WorkflowRef<W extends Workflow = Workflow> {
  constructor(
    private readonly sdk: WorkflowHandle<W>,
    private readonly counted: Counted,
  ) {}

  get workflowId(): string {
    return this.sdk.workflowId;
  }

  /**
   * A Query. One that reached a workflow no worker has run yet (QUERY_COLD,
   * workflows/interceptors.ts) is asked again after a wake signal: the
   * signal's workflow task has a worker run the workflow from its whole
   * history, and the server holds a later Query until that task is done.
   * Here, so no caller can forget it (an approval's Query once did, and a
   * send answered INTERNAL_ERROR until something else woke its workflow).
   */
  query<Ret, Args extends unknown[]>(def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    return this.counted('query', async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.sdk.query(def, ...args);
        } catch (err) {
          const cold = err instanceof Error && err.message.includes(QUERY_COLD);
          if (!cold || attempt === COLD_ATTEMPTS - 1) throw err;
          // One wake; a Query that still finds it cold (it reached the worker before the wake's task) waits a little.
          if (attempt === 0) await this.sdk.signal(wakeSignal);
          else await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
        }
      }
    });
  }

  /** The Update's id is the caller's when it gives one: a repeat with the same id is answered, not applied again. */
  update<Ret, Args extends unknown[]>(def: UpdateDefinition<Ret, Args>, args: Args, updateId?: string): Promise<Ret> {
    // The SDK's overloads split on arity; the definition already ties args to the handler's type.
    const call = this.sdk.executeUpdate as (d: unknown, o: { args: unknown[]; updateId?: string }) => Promise<Ret>;
    return this.counted('update', () => call.call(this.sdk, def, { args, ...(updateId === undefined ? {} : { updateId }) }));
  }

  /** An Update, answered once the workflow has accepted it (its validator passed); the result comes later. */
  startUpdate<Ret, Args extends unknown[]>(def: UpdateDefinition<Ret, Args>, args: Args, updateId: string): Promise<AcceptedUpdate<Ret>> {
    const call = this.sdk.startUpdate as (d: unknown, o: { args: unknown[]; updateId: string; waitForStage: typeof WorkflowUpdateStage.ACCEPTED }) => Promise<AcceptedUpdate<Ret>>;
    return this.counted('startUpdate', () => call.call(this.sdk, def, { args, updateId, waitForStage: WorkflowUpdateStage.ACCEPTED }));
  }

  signal<Args extends unknown[]>(def: SignalDefinition<Args>, ...args: Args): Promise<void> {
    return this.counted('signal', () => this.sdk.signal(def, ...args));
  }

  describe(): Promise<WorkflowDescription> {
    return this.counted('describe', () => this.sdk.describe());
  }

  result(): Promise<WorkflowResultType<W>> {
    return this.counted('result', () => this.sdk.result());
  }

  terminate(reason?: string): Promise<void> {
    return this.counted('terminate', async () => void (await this.sdk.terminate(reason)));
  }

  cancel(): Promise<void> {
    return this.counted('cancel', async () => void (await this.sdk.cancel()));
  }

  fetchHistory(): Promise<History> {
    return this.counted('fetchHistory', () => this.sdk.fetchHistory());
  }
}
