import type { Worker } from '@temporalio/worker';
import type { Logger } from '../log';

/** What one look at a worker needs: its run state and whether it waits for a workflow task. */
export type StatusOf = Pick<ReturnType<Worker['getStatus']>, 'runState' | 'hasOutstandingWorkflowPoll' | 'numInFlightWorkflowActivations' | 'numInFlightActivities' | 'numCachedWorkflows'>;

export interface StallWatchOptions {
  everyMs?: number;
  /** Looks in a row without a workflow poll before the worker is reported stalled. */
  looks?: number;
  /** A pause of the event loop at least this long is reported. */
  blockedMs?: number;
}

/**
 * Says in the log when a worker stops taking work while it should: its event
 * loop stood still (a synchronous call that waited), or a running worker has
 * had no workflow poll outstanding for several looks in a row. A worker that
 * stalls silently looks, from outside, like a Temporal outage (every run
 * answers `run_not_ready`); this line says which process to look at.
 */
export function startStallWatch(workers: { queue: string; status: () => StatusOf }[], log: Logger, opts: StallWatchOptions = {}): () => void {
  const everyMs = opts.everyMs ?? 10_000;
  const looks = opts.looks ?? 3;
  const blockedMs = opts.blockedMs ?? 2_000;
  const quiet = new Map<string, number>();
  let lookedAt = Date.now();
  const timer = setInterval(() => {
    // A look that comes late by this much: the event loop ran nothing else meanwhile.
    const late = Date.now() - lookedAt - everyMs;
    lookedAt = Date.now();
    if (late >= blockedMs) log.warn({ blockedMs: late }, 'the event loop stood still');
    for (const { queue, status } of workers) {
      const s = status();
      const idle = s.runState === 'RUNNING' && !s.hasOutstandingWorkflowPoll ? (quiet.get(queue) ?? 0) + 1 : 0;
      const before = quiet.get(queue) ?? 0;
      quiet.set(queue, idle);
      if (idle === looks) log.warn({ queue, ...s }, 'worker has not polled for workflow tasks for a while');
      if (idle === 0 && before >= looks) log.warn({ queue }, 'worker polls for workflow tasks again');
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
