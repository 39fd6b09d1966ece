import { Client, Connection } from '@temporalio/client';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { replayAll, summarize, type ReplayReport, HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { replaySkips } from '../support/replaySkip';
import { readTestEnv } from './env';

/**
 * The jest run's last step: every workflow history the run created, in the
 * test namespace, replayed with the workflow bundle the run used. Workflows
 * broken on purpose are listed by their tests (test/support/replaySkip.ts).
 * Returns what failed, one line each; empty when all is well.
 */
export async function replayEverything(): Promise<string[]> {
  // Read now, not at import: globalSetup loaded these modules before it named the run's folder.
  const root = process.env.DIPPER_TEST_DATA!;
  const env = readTestEnv(root);
  installQuietRuntime();
  const connection = await Connection.connect({ address: env.temporalAddress, channelArgs: HISTORY_CHANNEL_ARGS });
  let report: ReplayReport;
  try {
    report = await replayAll({
      client: new Client({ connection, namespace: env.namespace }),
      bundlePath: env.bundlePath,
      skip: replaySkips(root),
      concurrency: 8,
    });
  } finally {
    await connection.close();
  }
  process.stdout.write(`\n${summarize(report)}\n`);
  return [
    ...report.nondeterministic.map((p) => `nondeterministic: ${p.workflowId} (${p.message})`),
    ...report.failed.map((p) => `replay failed: ${p.workflowId} (${p.message})`),
    ...report.stuck.map((p) => `stuck: ${p.workflowId} (${p.message})`),
  ];
}
