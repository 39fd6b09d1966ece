import path from 'node:path';
import os from 'node:os';
import { Agents } from './bench/client';
import { startStack, Teardown } from './bench/stack';
import { Temporal } from './src/temporal';
import { temporalAddress } from './src/config';
import { eventMs, eventName } from './bench/historyEvents';
(async () => {
  const teardown = new Teardown();
  try {
    const stack = await startStack(path.join(os.tmpdir(), 'dist-bench'), teardown, () => undefined);
    const temporal = await Temporal.connect({ address: temporalAddress(stack.config), namespace: stack.config.temporal.namespace });
    const agents = new Agents(stack.gatewayUrl, stack.operatorToken);
    const run = await agents.startRun(1);
    const root = run.root;
    const tasks = ['a', 'b', 'c'].map((id) => ({ id, role: `engineer-${id}`, skill: 'worker', task: `Do ${id}.` }));
    const calls: { name: string; at: number; ms: number }[] = [];
    const now = () => performance.timeOrigin + performance.now();
    for (let i = 0; i < 50; i++) {
      for (const [name, args] of [['declare_plan', { tasks }], ['remove_plan', {}]] as const) {
        const at = now(); await root.call(name, args); calls.push({ name, at, ms: now() - at });
      }
    }
    const ids: string[] = [];
    for await (const wf of temporal.list(`DipperRunId = "${run.runId}"`)) ids.push(wf.workflowId);
    const rootId = ids.find((id) => id.includes('/agent/'))!;
    const events = (await temporal.handle(rootId).fetchHistory()).events ?? [];
    // Queue time of every workflow task in the measured part: scheduled → started.
    const from = calls[10].at;
    const queued: number[] = [];
    let sched: number | undefined;
    const causes = new Map<string, number[]>();
    let prev = '';
    let cause = '';
    for (const e of events) {
      const n = eventName(e);
      if (n === 'WORKFLOW_TASK_SCHEDULED') { sched = eventMs(e); cause = prev; }
      if (n === 'WORKFLOW_TASK_STARTED' && sched !== undefined) {
        if (eventMs(e) >= from) { queued.push(eventMs(e) - sched); causes.set(cause, [...(causes.get(cause) ?? []), Math.round(eventMs(e) - sched)]); }
        sched = undefined;
      }
      prev = n;
    }
    for (const [c, q] of causes) console.log('after', c, q.sort((a, b) => a - b).join(' '));
    const show = (a: number[]) => a.sort((x, y) => x - y).map((x) => x.toFixed(0)).join(' ');
    console.log('declare', show(calls.slice(10).filter((c) => c.name === 'declare_plan').map((c) => c.ms)));
    console.log('remove', show(calls.slice(10).filter((c) => c.name === 'remove_plan').map((c) => c.ms)));
    console.log('task queued', show(queued));
    const slow = [...calls.slice(10)].sort((a, b) => b.ms - a.ms)[0];
    console.log(`--- slowest ${slow.name} ${slow.ms.toFixed(1)} ms`);
    for (const e of events.filter((e) => eventMs(e) >= slow.at - 25 && eventMs(e) <= slow.at + slow.ms + 5)) {
      const act = e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.workflowExecutionSignaledEventAttributes?.signalName ?? e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? '';
      console.log(`  ${(eventMs(e) - slow.at).toFixed(1).padStart(7)} ${eventName(e)} ${act}`);
    }
    await agents.closeAll();
    await temporal.close();
  } finally { await teardown.run(); }
  process.exit(0);
})();
