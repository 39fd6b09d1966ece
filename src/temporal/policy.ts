import { randomUUID } from 'node:crypto';
import { QUERY_COLD } from '../common/pure/queryGuard';
import { countedIteration, type Counted, type Operation } from './counted';
import { beforeDeadline, callDeadline, MIN_QUERY_ATTEMPT_MS, queryCapMs, queryRetryAt } from './deadlines';
import { queryMayAnswerLater } from './errors';
import { backoff, isRetryable, MAX_ATTEMPTS } from './retry';

/**
 * What every call through this module gets, whoever makes it: the gateway's
 * tools, the iSphere approvals, the runtime and operator APIs, the worker's
 * activities and the CLI alike. Set once, when the connection is opened.
 */
export interface CallPolicy {
  /** A call made outside any caller's deadline (callDeadline) gets this long; unset, no deadline of Dipper's. */
  callTimeoutMs?: number;
  /** The workers' sticky queue timeout: no Query attempt outlives it (deadlines.ts, queryCapMs). Unset, no cap. */
  stickyTimeoutMs?: number;
}

/** When a call must be answered, when its RPCs must end, and when asking why it failed must end (in the reserve between). */
export interface CallTime {
  end: number;
  rpc: number;
  diagnosis: number;
}

/**
 * The time of a call starting now: its caller's deadline, else the policy's
 * timeout from now, else none. The RPCs get it less a reserve (a quarter of
 * what is left, at most a second), kept for asking whether a silent
 * workflow is broken.
 */
export function callTime(policy: CallPolicy): CallTime | undefined {
  const now = Date.now();
  const end = callDeadline() ?? (policy.callTimeoutMs === undefined ? undefined : now + policy.callTimeoutMs);
  if (end === undefined) return undefined;
  const reserve = Math.min(1000, Math.max(0, end - now) / 4);
  return { end, rpc: end - reserve, diagnosis: end - reserve / 5 };
}

/** Sets a gRPC deadline (ms since the epoch) on every RPC that fn makes. */
export type WithDeadline = <T>(deadline: number, fn: () => Promise<T>) => Promise<T>;

/** How long a cold workflow is given between Queries once it was woken: 200 ms doubling, at most 1.6 s. */
const coldPause = (colds: number) => 100 * 2 ** Math.min(colds, 4);

/**
 * The one place Temporal calls are bounded and repeated. An attempt ends by
 * the call's RPC deadline on the server's clock and, should gRPC let it
 * hang (seen with a Query to a dead worker under load), on ours a moment
 * later. Only Updates and Queries are repeated, each by its own rule.
 */
export class Calls {
  constructor(
    readonly policy: CallPolicy,
    private readonly counted: Counted,
    private readonly withDeadline: WithDeadline,
  ) {}

  /** One attempt of op, under the call's deadline. */
  once<T>(op: Operation, fn: () => Promise<T>, time: CallTime | undefined = callTime(this.policy)): Promise<T> {
    return this.counted(op, () => this.bounded(time?.rpc, fn));
  }

  /** An iteration (a visibility list) as one call of op: every page is fetched by the deadline of its first. */
  pages<T>(op: Operation, items: AsyncIterable<T>): AsyncGenerator<T> {
    const time = callTime(this.policy);
    return countedIteration(this.counted, op, items, (page) => this.bounded(time?.rpc, page));
  }

  private bounded<T>(rpc: number | undefined, fn: () => Promise<T>): Promise<T> {
    if (rpc === undefined || !Number.isFinite(rpc)) return fn();
    return beforeDeadline(this.withDeadline(rpc, fn), rpc + 100);
  }

  /**
   * An Update, sent again while the server says it was never applied
   * (retry.ts). Every attempt carries one Update id, the caller's or one
   * drawn here: a retry of one the server did take is answered, not
   * applied again.
   */
  async update<T>(op: Operation, fn: (updateId: string) => Promise<T>, updateId: string = randomUUID()): Promise<T> {
    const time = callTime(this.policy);
    const until = time?.rpc ?? Number.POSITIVE_INFINITY;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(op, () => fn(updateId), time);
      } catch (err) {
        if (!isRetryable(err) || attempt >= MAX_ATTEMPTS || Date.now() >= until) throw err;
        await backoff(attempt, until);
      }
    }
  }

  /**
   * A Query, asked again while a later attempt may be answered:
   * - a workflow no worker has run yet (QUERY_COLD, workflows/interceptors.ts) is woken once by `wake`, whose
   *   workflow task has a worker run it from its whole history (the server holds a later Query until that task is
   *   done), then asked at growing intervals;
   * - an attempt no worker answered is sent again once the server has given up on a dead worker's sticky queue
   *   (queryRetryAt): each attempt ends before the sticky timeout, so a read made as a worker dies is answered by
   *   its successor instead of refused (docs/decisions.md, "A Query must not outlive a dead worker");
   * - later attempts follow one another a quarter second apart at least (Temporal down is not hammered).
   * Without a deadline, the attempts are counted instead.
   */
  async query<T>(fn: () => Promise<T>, wake: () => Promise<void>): Promise<T> {
    const time = callTime(this.policy);
    const until = time?.rpc ?? Number.POSITIVE_INFINITY;
    const sticky = this.policy.stickyTimeoutMs ?? Number.POSITIVE_INFINITY;
    const cap = Number.isFinite(sticky) ? queryCapMs(sticky) : Number.POSITIVE_INFINITY;
    let colds = 0;
    for (let attempt = 0; ; attempt++) {
      const sentAt = Date.now();
      try {
        return await this.counted('query', () => this.bounded(Math.min(until, sentAt + cap), fn));
      } catch (err) {
        const cold = err instanceof Error && err.message.includes(QUERY_COLD);
        if (!queryMayAnswerLater(err) || attempt >= MAX_ATTEMPTS) throw err;
        if (cold && colds++ === 0) {
          await this.once('signal', wake, time);
          continue;
        }
        const again = cold ? Date.now() + coldPause(colds) : attempt === 0 ? queryRetryAt(sentAt, sticky) : Math.max(Date.now(), sentAt + 250);
        if (!Number.isFinite(again) || again + MIN_QUERY_ATTEMPT_MS > until) throw err;
        await new Promise((r) => setTimeout(r, Math.max(0, again - Date.now())));
      }
    }
  }
}
