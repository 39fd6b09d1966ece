import type { LogEntry } from '@temporalio/worker';
import { safeMessage } from '../log';

export interface SdkLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  fields: Record<string, unknown>;
  msg: string;
}

/**
 * Cases the SDK reports loudly that are expected around a restart, each
 * said once in plain words: what happened and that nothing is lost.
 */
const KNOWN: { test: (message: string, err: string) => boolean; level: SdkLine['level']; msg: string }[] = [
  {
    // Core's WARN, with the server's whole NotFound status as its details.
    test: (m) => m.startsWith('Activity not found on completion'),
    level: 'info',
    msg: 'an activity finished after its workflow had cancelled it or closed; the server no longer wanted its result (harmless)',
  },
  {
    test: (m) => m.startsWith('Activity not found when recording heartbeat'),
    level: 'info',
    msg: 'an activity heartbeat came after its workflow had cancelled it or closed (harmless)',
  },
  {
    // The cold-Query guard (workflows/interceptors.ts) refusing a Query on a fresh worker: the JS side's line.
    test: (m, err) => m === 'Failed to process Workflow Activation' && err.includes('not run by this worker yet'),
    level: 'info',
    msg: 'a Query came for a workflow this worker has not run since it started; the gateway wakes the workflow and asks again (harmless after a restart)',
  },
  {
    // The same refusal, as the core reports it: said once above.
    test: (m, err) => m === 'Failing legacy query request' && err.includes('not run by this worker yet'),
    level: 'debug',
    msg: 'a Query refused until the workflow has run here (said above)',
  },
  {
    test: (m) => m === 'Task not found when completing',
    level: 'info',
    msg: 'a workflow task finished after its time was up and another worker had taken it; its result was dropped (harmless after a slow task or a restart)',
  },
  {
    // An activation for a workflow this worker had already let go of (evicted, or a restart's first task): the server gives the task again.
    test: (m, err) => m === 'Failed to process Workflow Activation' && err.includes('untracked workflow with no init workflow job'),
    level: 'warn',
    msg: 'a workflow task came for a workflow this worker no longer held; the server hands it out again with its history (harmless after a restart)',
  },
];

/**
 * One line per SDK log entry, through Dipper's logger: Temporal's
 * internal run ids, task tokens and raw status dumps left out, errors as
 * their message only (never a stack).
 */
export function sdkLine(entry: Pick<LogEntry, 'level' | 'message' | 'meta'>): SdkLine {
  const { runId: _runId, error, task_token: _token, details, failure, err: coreErr, ...meta } = (entry.meta ?? {}) as Record<string, unknown>;
  // The core's failures are Rust debug dumps that carry the JS stack: only their message is kept.
  const failed = failure === undefined ? '' : failureMessage(String(failure));
  const err = error !== undefined ? safeMessage(error) : coreErr !== undefined ? safeMessage(String(coreErr)) : failed;
  const message = safeMessage(entry.message);
  const known = KNOWN.find((k) => k.test(message, err));
  if (known) return { level: known.level, fields: { ...meta, sdk: message.split('.')[0] }, msg: known.msg };
  const level = entry.level === 'ERROR' ? 'error' : entry.level === 'WARN' ? 'warn' : 'info';
  const fields = { ...meta, ...(err ? { err } : {}), ...(details === undefined ? {} : { details: safeMessage(String(details)).split('\n')[0] }) };
  return { level, fields, msg: message.split('\n')[0] };
}

/** The first `message: "…"` of a core failure's debug text, or its first line. */
function failureMessage(text: string): string {
  const m = /message: \\?"((?:[^"\\]|\\.)*)\\?"/.exec(text);
  return safeMessage(m ? m[1].replace(/\\"/g, '"') : text.split('\n')[0]);
}
