'use strict';
/*
 * Loaded (with --require) into the SDK's workflow threads only; see
 * src/worker/workflowThreads.ts for why and docs/decisions.md, "Cheaper
 * workflow activations". Plain CommonJS: it runs before tsx is registered.
 *
 * 1. Calls into the workflow VM run without Node's per-call timeout. That
 *    timeout starts and joins a watchdog thread on every call, several calls
 *    an activation (250-420 µs each on a busy 2-core machine, 3 µs without).
 *    Instead each call's start is written to memory shared with the main
 *    thread, which ends the process when one call runs too long.
 * 2. The SDK's promise hook, which captures a stack trace for every promise
 *    a workflow makes (for the `__stack_trace` Query), is not installed.
 */
const { isMainThread, threadId } = require('node:worker_threads');
const vm = require('node:vm');
const v8 = require('node:v8');

if (!isMainThread) {
  // [0]: when the call under way began (clock() in workflowThreads.ts: Date.now() kept to 31 bits), 0 when none is.
  const running = new Int32Array(new SharedArrayBuffer(4));
  const channel = new BroadcastChannel('dipper-workflow-threads');
  // With the thread's id, so the main thread forgets it when the thread ends (a thread ended mid-call is not stuck).
  channel.postMessage({ threadId, buffer: running.buffer });
  channel.close();

  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (context, options) {
    if (!options || options.timeout === undefined) return runInContext.call(this, context, options);
    const { timeout: _timeout, ...rest } = options;
    // Nested calls keep the outer start.
    const outer = Atomics.load(running, 0);
    if (outer === 0) Atomics.store(running, 0, Date.now() % 0x7fffffff || 1);
    try {
      return runInContext.call(this, context, rest);
    } finally {
      if (outer === 0) Atomics.store(running, 0, 0);
    }
  };

  const createHook = v8.promiseHooks.createHook;
  v8.promiseHooks.createHook = function (hooks) {
    // The SDK's stack-trace hook is the one with init and settled only.
    if (hooks && hooks.init && hooks.settled && !hooks.before && !hooks.after) return () => undefined;
    return createHook.call(this, hooks);
  };
}
