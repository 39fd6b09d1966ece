import path from 'node:path';
import workerThreads from 'node:worker_threads';
import type { Logger } from '../log';

const PRELOAD = path.join(__dirname, 'workflowThreadPreload.cjs');
/** The SDK's workflow thread entry point (@temporalio/worker lib/workflow/workflow-worker-thread.js). */
const WORKFLOW_THREAD = /[\\/]workflow-worker-thread\.js$/;

/** The clock the preload writes: milliseconds, kept to 31 bits so an Int32Array holds them (0 means no call). */
export function clock(now = Date.now()): number {
  return now % 0x7fffffff || 1;
}

/**
 * How long the call a thread shows has run, in ms; 0 when it shows none. The clock wraps every 24.8 days. A call
 * that began after `now` was read (the thread's own clock read a moment later) has only just begun: read as a wrap,
 * it ran 24.8 days, and a worker was ended for it in CI ("ms":2147483645).
 */
export function runningFor(began: number, now: number): number {
  if (began === 0) return 0;
  const ran = now - began;
  if (ran < 0 && ran > -0x3fffffff) return 0;
  return (ran + 0x7fffffff) % 0x7fffffff;
}

export interface Watch {
  stop(): void;
}

/**
 * Makes the workflow threads the SDK starts from now on load
 * workflowThreadPreload.cjs: activations without a watchdog thread per VM
 * call and without a stack trace per promise (about 2.5 times as fast a
 * replay on a busy 2-core machine; docs/decisions.md, "Cheaper workflow
 * activations"). What the watchdog guarded against, workflow code that does
 * not return, is watched here instead: a VM call running `stuckMs` ends the
 * process with a clear line, for the supervisor to start a fresh one.
 * Only the SDK's own workflow threads are touched; call before Worker.create.
 */
export function speedUpWorkflowThreads(log: Logger, stuckMs = 30_000, onStuck: () => void = () => process.exit(70)): Watch {
  // What each live workflow thread shows, by thread id; a thread that ends is forgotten, whatever it showed last.
  const calls = new Map<number, Int32Array>();
  const ended = new Set<number>();
  const Original = workerThreads.Worker;
  class WorkflowThread extends Original {
    constructor(filename: string | URL, options: workerThreads.WorkerOptions = {}) {
      const workflows = WORKFLOW_THREAD.test(String(filename));
      super(filename, workflows ? { ...options, execArgv: [...(options.execArgv ?? process.execArgv), '--require', PRELOAD] } : options);
      if (!workflows) return;
      const id = this.threadId;
      this.once('exit', () => {
        calls.delete(id);
        ended.add(id);
      });
    }
  }
  const threads = workerThreads as { Worker: typeof Original };
  threads.Worker = WorkflowThread;

  const channel = new workerThreads.BroadcastChannel('dipper-workflow-threads');
  channel.onmessage = (event) => {
    const data = (event as MessageEvent).data as { threadId?: unknown; buffer?: unknown } | null;
    // By its tag: a buffer from another realm (a test's) is not an instance of this one's class.
    if (typeof data?.threadId !== 'number' || Object.prototype.toString.call(data.buffer) !== '[object SharedArrayBuffer]') return;
    // A thread can end before its first message is read here.
    if (!ended.delete(data.threadId)) calls.set(data.threadId, new Int32Array(data.buffer as SharedArrayBuffer));
  };
  (channel as unknown as { unref(): void }).unref();
  const timer = setInterval(() => {
    for (const [thread, running] of calls) {
      // The start first, then the clock: a call that begins in between is read as just begun, not as a wrap.
      const began = Atomics.load(running, 0);
      const ms = runningFor(began, clock());
      if (ms > stuckMs) {
        log.error({ ms, thread }, 'workflow code has run without returning for too long; ending the worker so a fresh one takes over');
        onStuck();
        return;
      }
    }
  }, Math.min(1000, stuckMs / 4));
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      channel.close();
      threads.Worker = Original;
    },
  };
}
