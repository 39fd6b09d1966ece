import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { safeMessage, type Logger } from '../log';
import type { Temporal } from '../temporal';
import { repair, resetEventId } from './doctor';
import { MEND_REASON, replayOptions } from './replayAll';
import { pinnedElsewhere } from '../versioning/pinned';

/**
 * The one nondeterminism Dipper mends on its own: a workflow task whose
 * Update acceptances the live worker ordered after other commands, which
 * replay puts first. SDK core groups history into activations differently
 * live and in replay around a worker that dies or stalls (docs/decisions.md,
 * "Mending what a worker crash breaks"). A deploy that changed workflow code
 * breaks replay in other ways, and that is a person's call (`dipper doctor`).
 */
export const MENDABLE = /Update machine does not handle this event/;


/**
 * Running workflows of a task queue that Temporal flags because their
 * workflow task keeps failing as nondeterministic (`TemporalReportedProblems`,
 * set after `system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute`
 * attempts; temporal-config/ sets it to 2). Only the queue's own workers
 * run its code, so only they judge its histories.
 */
const flagged = (taskQueue: string) =>
  `TaskQueue = ${JSON.stringify(taskQueue)} AND ExecutionStatus = "Running" AND TemporalReportedProblems IN ("cause=WorkflowTaskFailedCauseNonDeterministicError")`;

export interface MenderOptions {
  temporal: Temporal;
  taskQueue: string;
  /** The code this worker runs: a history is mended only if this code cannot replay it. */
  workflowBundle: { code: string } | { codePath: string };
  everyMs: number;
  /** Workflows looked at per pass at most; the rest wait for the next pass. */
  maxPerPass?: number;
  /** This worker's build: a workflow pinned to another is left to that build's workers (src/versioning/pinned.ts). */
  buildId?: string;
}

export interface MendOutcome {
  workflowId: string;
  /** `mended`, or why not. */
  outcome: 'mended' | 'not_mendable' | 'replays' | 'failed';
  detail?: string;
}

/**
 * One pass: each flagged workflow is replayed with this worker's code, and
 * one that fails with the known signature is reset to its last good
 * workflow task, reapplying every Signal and Update after it (as `dipper
 * doctor --repair` does). The reset's request id is derived from the run and
 * the point, so workers that find the same run at once make one reset.
 */
export async function mendOnce(o: MenderOptions): Promise<MendOutcome[]> {
  const found: { workflowId: string; runId: string }[] = [];
  for await (const wf of o.temporal.list(flagged(o.taskQueue))) {
    if (!pinnedElsewhere(wf, o.buildId)) found.push({ workflowId: wf.workflowId, runId: wf.runId });
  }
  const outcomes: MendOutcome[] = [];
  for (const wf of found.slice(0, o.maxPerPass ?? 20)) {
    outcomes.push(await mendOne(o, wf).catch((err: unknown) => ({ workflowId: wf.workflowId, outcome: 'failed' as const, detail: safeMessage(err) })));
  }
  return outcomes;
}

async function mendOne(o: MenderOptions, wf: { workflowId: string; runId: string }): Promise<MendOutcome> {
  const history = await o.temporal.handle(wf.workflowId, wf.runId).fetchHistory();
  const verdict = await Worker.runReplayHistory(replayOptions(o.workflowBundle, 'mend'), history).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (verdict === undefined) return { workflowId: wf.workflowId, outcome: 'replays' };
  const message = verdict instanceof Error ? verdict.message : String(verdict);
  if (!(verdict instanceof DeterminismViolationError) || !MENDABLE.test(message)) {
    return { workflowId: wf.workflowId, outcome: 'not_mendable', detail: safeMessage(message.split('\n')[0]) };
  }
  const point = resetEventId(history.events ?? [], message);
  if (point === undefined) return { workflowId: wf.workflowId, outcome: 'not_mendable', detail: 'no workflow task to reset to' };
  await repair(
    { temporal: o.temporal, bundlePath: '' },
    { workflowId: wf.workflowId, runId: wf.runId, kind: 'nondeterministic', message, resetEventId: point },
    { reason: `${MEND_REASON}: replay disagrees with the workflow task completed at event ${point}`, requestId: `mend-${wf.runId}-${point}` },
  );
  return { workflowId: wf.workflowId, outcome: 'mended', detail: `reset to event ${point}` };
}

/** Mends every `everyMs` until stopped; returns the stop function. */
export function startMender(o: MenderOptions, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const warned = new Set<string>();
  const tick = async () => {
    try {
      for (const m of await mendOnce(o)) {
        if (m.outcome === 'mended') log.warn({ workflow: m.workflowId, detail: m.detail }, 'mended a workflow a crash left unreplayable');
        else if (m.outcome !== 'replays' && !warned.has(m.workflowId)) {
          warned.add(m.workflowId);
          log.error({ workflow: m.workflowId, detail: m.detail }, 'a workflow cannot replay and is not mended automatically; run dipper doctor');
        }
      }
    } catch (err) {
      // A server without the flag (older than 1.30, or self-hosted without the dynamic config) cannot be asked: say so once.
      if (/TemporalReportedProblems/.test(String(err))) {
        log.warn({ err: safeMessage(err) }, 'this Temporal server does not flag failing workflow tasks; mending is off (temporal-config/ sets it up)');
        return;
      }
      log.warn({ err: safeMessage(err) }, 'mend pass failed; trying again later');
    }
    if (!stopped) {
      timer = setTimeout(() => void tick(), o.everyMs);
      timer.unref();
    }
  };
  timer = setTimeout(() => void tick(), o.everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
