import fs from 'node:fs';
import path from 'node:path';
import workerThreads from 'node:worker_threads';
import { Worker } from '@temporalio/worker';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { replayOptions } from '../../src/ops/replayAll';
import { createLogger } from '../../src/log';
import { speedUpWorkflowThreads } from '../../src/worker/workflowThreads';

/**
 * Run as its own process by workflowVm.test.ts: replays one history in the
 * SDK's workflow thread, with a spy loaded into that thread (after Dipper's
 * preload, in mode `dipper`). The spy counts the VM calls that reach Node
 * with a timeout and the promise hooks created with the SDK's shape.
 * Prints `{"timedCalls": n, "calls": n, "stackHooks": n, "ok": bool}`.
 */
async function main(): Promise<void> {
  const [bundlePath, historyFile, mode] = process.argv.slice(2);
  installQuietRuntime();
  if (mode === 'dipper') speedUpWorkflowThreads(createLogger({ logLevel: 'warn' } as never, 'probe'));
  // Loaded after Dipper's preload (when there is one), so it sees what reaches Node.
  const threads = workerThreads as { Worker: typeof workerThreads.Worker };
  const Before = threads.Worker;
  const spy = path.join(__dirname, 'workflowVmSpy.cjs');
  threads.Worker = class extends Before {
    constructor(file: string | URL, options: workerThreads.WorkerOptions = {}) {
      super(file, { ...options, execArgv: [...(options.execArgv ?? process.execArgv), '--require', spy] });
    }
  };
  const counts = { timedCalls: 0, calls: 0, stackHooks: 0 };
  const channel = new BroadcastChannel('dipper-workflow-vm-spy');
  channel.onmessage = (e) => Object.assign(counts, (e as MessageEvent).data);
  const history = JSON.parse(fs.readFileSync(historyFile, 'utf8'));
  const result = await Worker.runReplayHistory(replayOptions({ codePath: bundlePath }, 'probe'), history).then(
    () => true,
    () => false,
  );
  // The spy's last report is on its way when the replay ends.
  await new Promise((r) => setTimeout(r, 200));
  channel.close();
  process.stdout.write(JSON.stringify({ ...counts, ok: result }));
  process.exit(0);
}

void main();
