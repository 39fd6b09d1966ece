import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The replay beside the tests (replayAlong.ts), as the test process sees it. */
export interface ReplayAlong {
  /** Stops it, and says which runs it replayed well at which length. */
  stop(): Promise<(runId: string, events: number) => boolean>;
}

export function startReplayAlong(root: string): ReplayAlong {
  const out = path.join(root, 'replayed-along.jsonl');
  const log = fs.openSync(path.join(root, 'replay-along.log'), 'a');
  // Its IPC channel is how it knows the test process went: it ends then, even when jest is killed.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'replayAlong.ts'), root, out], {
    stdio: ['ignore', log, log, 'ipc'],
  });
  fs.closeSync(log);
  child.unref();
  child.channel?.unref();
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.ref();
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      const done = new Map<string, Set<number>>();
      const lines = fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n') : [];
      for (const line of lines) {
        // The last line may be half written when it was stopped.
        try {
          const { runId, events } = JSON.parse(line) as { runId: string; events: number };
          done.set(runId, (done.get(runId) ?? new Set()).add(events));
        } catch {
          continue;
        }
      }
      return (runId, events) => done.get(runId)?.has(events) ?? false;
    },
  };
}
