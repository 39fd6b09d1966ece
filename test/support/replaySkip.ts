import type { WorkflowExecutionInfo } from '@temporalio/client';
import fs from 'node:fs';
import path from 'node:path';
import { testDataRoot } from '../setup/env';

/**
 * The jest run ends by replaying every history it created (globalTeardown).
 * A test that breaks workflows on purpose, or runs workflow types Dipper's
 * bundle does not hold, lists them here first: one JSON line per workflow
 * id, or per Dipper run (every workflow of `run/<run_id>`), with a reason.
 */
export type ReplaySkip = ({ workflowId: string } | { runId: string }) & { reason: string };

const file = (root = testDataRoot) => path.join(root, 'replay-skip.jsonl');

export function skipReplayOf(entry: ReplaySkip): void {
  fs.appendFileSync(file(), `${JSON.stringify(entry)}\n`);
}

/** The reason a listed workflow is not replayed, or undefined. */
export function replaySkips(root = testDataRoot): (wf: WorkflowExecutionInfo) => string | undefined {
  const entries: ReplaySkip[] = fs.existsSync(file(root))
    ? fs.readFileSync(file(root), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReplaySkip)
    : [];
  return (wf) =>
    entries.find((e) =>
      'workflowId' in e ? e.workflowId === wf.workflowId : wf.workflowId === `run/${e.runId}` || wf.workflowId.startsWith(`run/${e.runId}/`),
    )?.reason;
}
