import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ReplayOutcome } from '../../src/ops/replayAll';

export interface ReplayAlongside {
  /** Stops it taking more runs, waits for what it holds, and returns every verdict by run id (empty if it failed). */
  finish(): Promise<Map<string, ReplayOutcome>>;
}

/**
 * Starts the replayer that runs beside the test files (replayAlongsideMain.ts)
 * at the lowest CPU priority: it uses what the tests leave idle, and the
 * end-of-run replay takes its verdicts on closed runs instead of replaying
 * them again. If it fails, the end-of-run replay does everything itself.
 */
export function startReplayAlongside(root: string): ReplayAlongside {
  const log = fs.openSync(path.join(root, 'replay-alongside.log'), 'a');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'replayAlongsideMain.ts'), root], {
    stdio: ['ignore', log, log, 'ipc'],
  });
  fs.closeSync(log);
  try {
    os.setPriority(child.pid!, 19);
  } catch {
    // Not allowed here: it still runs, only less politely.
  }
  let outcomes: ReplayOutcome[] | undefined;
  child.on('message', (m: { outcomes?: ReplayOutcome[] }) => (outcomes = m.outcomes));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async finish() {
      if (child.connected) child.send('finish');
      await exited;
      return new Map((outcomes ?? []).map((o) => [o.runId, o]));
    },
  };
}
