import { isNotFound, type Temporal } from '../temporal';
import type { ContentStore } from '../common/stores/contentStore';
import { runWorkflowId } from '../../workflows/ids';
import { safeMessage, type Logger } from '../log';

export interface SweepOptions {
  /** Content of a run is kept this long after the run closed (and never past Temporal purging the run). */
  retentionMs: number;
}

/**
 * Content goes with its run: once Temporal has purged the run (namespace
 * retention), or `retentionMs` after the run closed, whichever comes first.
 * A run whose state cannot be learned now keeps its content until a later
 * sweep can tell. Returns the runs whose content went.
 */
export async function sweepContent(store: ContentStore, temporal: Temporal, opts: SweepOptions, now = Date.now()): Promise<string[]> {
  const gone: string[] = [];
  for (const runId of await store.runs()) {
    try {
      const run = await temporal.handle(runWorkflowId(runId)).describe();
      const closed = run.closeTime?.getTime();
      if (closed === undefined || now - closed < opts.retentionMs) continue;
    } catch (err) {
      if (!isNotFound(err)) continue;
    }
    await store.dropRun(runId);
    gone.push(runId);
  }
  return gone;
}

/** Sweeps every `everyMs` in the background of a worker; each worker may, since a sweep deletes only what no run needs. */
export function startContentSweeper(store: ContentStore, temporal: Temporal, opts: SweepOptions & { everyMs: number }, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      const gone = await sweepContent(store, temporal, opts);
      if (gone.length > 0) log.info({ runs: gone.length }, 'removed the content of ended runs');
    } catch (err) {
      log.warn({ err: safeMessage(err) }, 'content sweep failed; trying again later');
    }
    if (!stopped) {
      timer = setTimeout(() => void tick(), opts.everyMs);
      timer.unref();
    }
  };
  timer = setTimeout(() => void tick(), Math.min(opts.everyMs, 60_000));
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
