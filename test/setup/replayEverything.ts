import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { replayAll, replayingProcess, replayersForMachine, summarize, type ReplayReport, HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { Temporal } from '../../src/temporal';
import { replaySkips } from '../support/replaySkip';
import { temporalTargetOf } from '../support/temporal';
import { readTestEnv } from './env';

/**
 * The jest run's last step: every workflow history the run created, in the
 * test namespace, replayed with the workflow bundle the run used. Workflows
 * broken on purpose are listed by their tests (test/support/replaySkip.ts).
 * Returns what failed, one line each; empty when all is well.
 */
export async function replayEverything(replayedBefore?: (runId: string, events: number) => boolean): Promise<string[]> {
  // Read now, not at import: globalSetup loaded these modules before it named the run's folder.
  const root = process.env.DIPPER_TEST_DATA!;
  const env = readTestEnv(root);
  const threads = replayingProcess('replay');
  const connection = await Connection.connect({ ...temporalTargetOf(env), channelArgs: HISTORY_CHANNEL_ARGS });
  let report: ReplayReport;
  try {
    const client = new Client({ connection, namespace: env.namespace });
    report = await replayAll({ temporal: Temporal.over(client), bundlePath: env.bundlePath, skip: replaySkips(root), concurrency: 8, replayers: replayersForMachine(), replayedBefore });
    await keepProblemHistories(client, report, path.join(root, 'problem-histories'));
  } finally {
    await connection.close();
    threads.stop();
  }
  process.stdout.write(`\n${summarize(report)}\n`);
  return [
    ...report.nondeterministic.map((p) => `nondeterministic: ${p.workflowId} (${p.message})`),
    ...report.failed.map((p) => `replay failed: ${p.workflowId} (${p.message})`),
    ...report.stuck.map((p) => `stuck: ${p.workflowId} (${p.message})`),
  ];
}

/** Each problem's history, as JSON beside the run's logs: the dev server keeps nothing once it stops. */
async function keepProblemHistories(client: Client, report: ReplayReport, dir: string): Promise<void> {
  const problems = [...report.nondeterministic, ...report.failed, ...report.stuck];
  for (const p of problems) {
    try {
      const history = await client.workflow.getHandle(p.workflowId, p.runId).fetchHistory();
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `${p.workflowId.replace(/[^\w.-]+/g, '_')}.json`), historyToJSON(history));
    } catch {
      // best effort: the report already names it
    }
  }
}
