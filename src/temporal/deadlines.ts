import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The one deadline policy, by kind of call:
 * - a tool call (MCP) or an HTTP request (runtime inbox, operator API, webhook): the moment its caller must be
 *   answered by, carried implicitly (`callDeadline`), else `callTimeoutMs` from now; the RPC gets that less a
 *   reserve, kept for asking whether a silent workflow is broken (`callTime`, policy.ts);
 * - a Query: also never past the workers' sticky queue timeout less a second (`queryCapMs`);
 * - a wait no Temporal deadline covers: our own clock (`beforeDeadline`), since gRPC's deadline has been seen to let
 *   a Query to a dead worker hang past it under load;
 * - everything else (workers, the doctor, the CLI, activities): no deadline of Dipper's; the SDK's own
 *   and the caller's process lifetime bound them. Their Queries are still capped and their Updates still retried.
 * policy.ts applies all of it to every call made through this module.
 */
const current = new AsyncLocalStorage<number>();

/** The moment by which the call being served must be answered, if one is being served. */
export function callDeadline(): number | undefined {
  return current.getStore();
}

/** Runs fn under its own deadline, e.g. a delivery batch that outlives the call that started it. */
export function underDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  return current.run(deadline, fn);
}

/** A Query's deadline: a second short of the sticky timeout, and never under half a second. */
export function queryCapMs(stickyTimeoutMs: number): number {
  return Math.max(500, stickyTimeoutMs - 1000);
}

/**
 * When a Query that got no answer may be sent again. The server offers a Query to the worker that ran the workflow
 * last and, if that worker is dead, gives up on its sticky queue a sticky timeout after the Query arrived, whether
 * its caller still waits or not, and clears the workflow's stickiness: a Query sent after that goes to any worker
 * (a new request, so the server again holds it while events wait for a task). Sent sooner, it would wait on the
 * dead queue too.
 */
export function queryRetryAt(sentAt: number, stickyTimeoutMs: number): number {
  return sentAt + stickyTimeoutMs + STICKY_MARGIN_MS;
}

/** Room for the server's own clock and its stickiness reset after its sticky wait ends. */
const STICKY_MARGIN_MS = 250;

/** A Query attempt shorter than this is not worth sending. */
export const MIN_QUERY_ATTEMPT_MS = 500;

/** Our own clock on a call: gRPC's deadline has been seen to let a Query to a dead worker hang well past it under load. */
export class NoAnswerInTime extends Error {
  readonly code = 4; // gRPC DEADLINE_EXCEEDED, so the error map reads it like the server's own
  constructor() {
    super('no answer before the deadline');
  }
}

/** `call`, or NoAnswerInTime once `deadline` (ms since the epoch) passes; the call itself is left to its own deadline. */
export function beforeDeadline<T>(call: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerInTime()), Math.max(0, deadline - Date.now()));
  });
  call.catch(() => undefined);
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}
