import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../src/log';
import { clock, runningFor, speedUpWorkflowThreads } from '../../src/worker/workflowThreads';

const lines: { level: string; msg: string; thread?: number }[] = [];
const log = {
  error: (fields: { thread?: number }, msg: string) => lines.push({ level: 'error', msg, thread: fields.thread }),
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
} as unknown as Logger;

/** What a workflow thread's preload shares: its id and when its VM call under way began, 0 for none. */
function threadShowing(threadId: number, began: number): void {
  const running = new Int32Array(new SharedArrayBuffer(4));
  Atomics.store(running, 0, began);
  const channel = new BroadcastChannel('dipper-workflow-threads');
  channel.postMessage({ threadId, buffer: running.buffer });
  channel.close();
}

async function until(ok: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return ok();
}

it('reads how long a thread has been in a call from what it shows', () => {
  const now = clock(Date.parse('2026-12-04T08:00:00Z'));
  expect(runningFor(0, now)).toBe(0);
  expect(runningFor(clock(Date.parse('2026-12-04T07:59:55Z')), now)).toBe(5_000);
  // Across the clock's wrap.
  expect(runningFor(0x7fffffff - 100, 200)).toBe(300);
  // A call the thread began a moment after the watch read its clock has just begun, not run for 24.8 days.
  expect(runningFor(clock(Date.parse('2026-12-04T08:00:00.002Z')), now)).toBe(0);
});

it('ends the worker when a workflow VM call has run too long', async () => {
  let stuck = 0;
  const watch = speedUpWorkflowThreads(log, 300, () => stuck++);
  try {
    threadShowing(9001, 0);
    threadShowing(9002, clock());
    // A thread that started a call 5 s ago and never returned.
    threadShowing(9003, clock(Date.now() - 5_000));
    expect(await until(() => stuck > 0, 5_000)).toBe(true);
    expect(lines).toContainEqual({ level: 'error', msg: expect.stringContaining('workflow code has run without returning'), thread: 9003 });
  } finally {
    watch.stop();
  }
});

it('loads the preload into the SDK workflow threads only, and stop() puts the class back', async () => {
  // The module object itself, as the SDK reads it (an import would copy its exports).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
  const Worker = threads.Worker;
  const watch = speedUpWorkflowThreads(log, 60_000, () => undefined);
  try {
    expect(threads.Worker).not.toBe(Worker);
    // Any other thread starts as it would have: no preload among its options.
    const plain = new threads.Worker('require("node:worker_threads").parentPort.postMessage(process.execArgv)', { eval: true });
    const argv = await new Promise<string[]>((resolve) => plain.once('message', resolve));
    await plain.terminate();
    expect(argv.join(' ')).not.toContain('workflowThreadPreload');
  } finally {
    watch.stop();
  }
  expect(threads.Worker).toBe(Worker);
});

it('forgets a workflow thread that ended in the middle of a call', async () => {
  // A stand-in for the SDK's thread file (the name is what marks it), which shows a call begun 5 s ago and ends.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-threads-'));
  const file = path.join(dir, 'workflow-worker-thread.js');
  fs.writeFileSync(
    file,
    `const { threadId } = require('node:worker_threads');
     const running = new Int32Array(new SharedArrayBuffer(4));
     Atomics.store(running, 0, ${clock(Date.now() - 5_000)});
     const channel = new BroadcastChannel('dipper-workflow-threads');
     channel.postMessage({ threadId, buffer: running.buffer });
     channel.close();`,
  );
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
  let stuck = 0;
  lines.length = 0;
  const watch = speedUpWorkflowThreads(log, 300, () => stuck++);
  try {
    const ended = new threads.Worker(file);
    const endedId = ended.threadId;
    await new Promise((resolve) => ended.once('exit', resolve));
    // Seen stuck while it was still alive (a check between its message and its end, on a busy machine) is right;
    // from its end on it must not be.
    lines.length = 0;
    stuck = 0;
    // The positive sign: a live thread stuck the same way is seen, and it is the only one named.
    threadShowing(9100, clock(Date.now() - 5_000));
    expect(await until(() => stuck > 0, 5_000)).toBe(true);
    expect(lines.map((l) => l.thread)).toEqual([9100]);
    expect(endedId).not.toBe(9100);
  } finally {
    watch.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
