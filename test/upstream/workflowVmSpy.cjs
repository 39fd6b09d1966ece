'use strict';
// Loaded into the SDK's workflow thread by workflowVmProbe.ts: counts what reaches Node.
const { isMainThread } = require('node:worker_threads');
const vm = require('node:vm');
const v8 = require('node:v8');

if (!isMainThread) {
  const counts = { timedCalls: 0, calls: 0, stackHooks: 0 };
  const channel = new BroadcastChannel('dipper-workflow-vm-spy');
  const report = () => channel.postMessage(counts);
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (context, options) {
    counts.calls++;
    if (options && options.timeout !== undefined) counts.timedCalls++;
    if (counts.calls % 50 === 0) report();
    return runInContext.call(this, context, options);
  };
  const createHook = v8.promiseHooks.createHook;
  v8.promiseHooks.createHook = function (hooks) {
    if (hooks && hooks.init && hooks.settled) counts.stackHooks++;
    report();
    return createHook.call(this, hooks);
  };
  setInterval(report, 50).unref();
}
