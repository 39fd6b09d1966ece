import fs from 'node:fs';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { replayAll, replayingProcess, HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { Temporal } from '../../src/temporal';
import { replaySkips } from '../support/replaySkip';
import { temporalTargetOf } from '../support/temporal';
import { readTestEnv } from './env';

/** A running workflow this old is probably done changing (its test has moved on); a wrong guess is replayed again at the end. */
const QUIET_MS = 60_000;
const PASS_EVERY_MS = 20_000;

/**
 * Runs beside the tests (started by globalSetup, at the lowest CPU
 * priority): replays each history once it has been quiet a while, and
 * writes every good replay's run id and length to `out`, a JSON line each.
 * The end-of-run replay (replayEverything.ts) replays again only what
 * changed since, or was not reached: the same check, most of it done on
 * cores the tests leave idle. Ends when the test process goes.
 */
async function main(root: string, out: string): Promise<void> {
  os.setPriority(19);
  replayingProcess('replay-along');
  process.on('disconnect', () => process.exit(0));
  const env = readTestEnv(root);
  const connection = await Connection.connect({ ...temporalTargetOf(env), channelArgs: HISTORY_CHANNEL_ARGS });
  const temporal = Temporal.over(new Client({ connection, namespace: env.namespace }));
  const tried = new Set<string>();
  for (;;) {
    await new Promise((r) => setTimeout(r, PASS_EVERY_MS));
    const quietBefore = Date.now() - QUIET_MS;
    const skipped = replaySkips(root);
    await replayAll({
      temporal,
      bundlePath: env.bundlePath,
      concurrency: 2,
      replayers: 1,
      skip: (wf) => {
        const last = (wf.closeTime ?? wf.startTime).getTime();
        if (tried.has(wf.runId) || last > quietBefore || skipped(wf)) return 'not now';
        tried.add(wf.runId);
        return undefined;
      },
      onReplayed: (o) => {
        if (o.verdict === 'ok') fs.appendFileSync(out, `${JSON.stringify({ runId: o.runId, events: o.events })}\n`);
      },
    });
  }
}

main(process.argv[2], process.argv[3]).catch((err) => {
  // The end-of-run replay replays whatever this did not: a failure here costs time, never the check.
  process.stderr.write(`replay beside the tests stopped: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
