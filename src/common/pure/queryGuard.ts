import { defineSignal } from '@temporalio/workflow';

/**
 * What the workflows' Query guard (workflows/interceptors.ts) says when it refuses a Query, and the signal that
 * lets a workflow answer one: shared by the guard and the gateway's Temporal client (src/temporal), which asks again.
 */

/** The failure message of a refused Query; the gateway answers it as `unavailable`, to be asked again. */
export const QUERY_REFUSED = 'dipper: history grew without a workflow task; ask again';
/** The failure message of a Query that reached a workflow no worker has run a workflow task for yet; the gateway wakes it (wakeSignal) and asks again. */
export const QUERY_COLD = 'dipper: not run by this worker yet; wake it and ask again';

/**
 * A no-op signal whose only effect is a workflow task: a worker runs the
 * workflow from its full history, as replay does, and keeps it; Queries are
 * answered from then on. Every workflow the gateway queries handles it.
 */
export const wakeSignal = defineSignal<[]>('dipperWake');
