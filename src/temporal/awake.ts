import type { QueryDefinition } from '@temporalio/common';
import { QUERY_COLD, wakeSignal } from '../../workflows/interceptors';
import type { WorkflowRef } from './handle';

/**
 * A Query, and if it reached a workflow no worker has run yet (QUERY_COLD,
 * workflows/interceptors.ts) a wake signal and the Query again: the signal's
 * workflow task has a worker run the workflow from its whole history, and
 * the server holds the second Query until that task is done.
 */
export async function queryAwake<Ret, Args extends unknown[]>(handle: WorkflowRef, def: QueryDefinition<Ret, Args>, args: Args): Promise<Ret> {
  try {
    return await handle.query(def, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.includes(QUERY_COLD)) throw err;
    await handle.signal(wakeSignal);
    return handle.query(def, ...args);
  }
}
