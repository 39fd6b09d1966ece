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
    const ids = Array.from({ length: 60 }, (_, i) => `t${i}`);
    await root.call('declare_plan', { tasks: ids.map((id) => ({ id, role: `engineer-${id}`, skill: 'worker', task: `Do ${id}.` })) });
    const calls: { name: string; at: number; ms: number }[] = [];
    const now = () => performance.timeOrigin + performance.now();
    for (const id of ids) { const at = now(); await root.call('spawn_agent', { task_id: id }); calls.push({ name: id, at, ms: now() - at }); }
    const show = (a: number[]) => a.sort((x, y) => x - y).map((x) => x.toFixed(0)).join(' ');
    console.log('spawn', show(calls.slice(5).map((c) => c.ms)));
    const wfs: string[] = [];
    for await (const wf of temporal.list(`DipperRunId = "${run.runId}"`)) wfs.push(wf.workflowId);
    const all: { id: string; e: any }[] = [];
    for (const id of wfs) if (!/\/agent\/ag_/.test(id) || id === wfs.find((w) => w.includes('/agent/'))) { /* all */ }
    for (const id of new Set(wfs)) {
      const h = (await temporal.handle(id).fetchHistory()).events ?? [];
      const isRoot = h.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'spawnAgent');
      const isRun = !id.includes('/agent/');
      if (!isRoot && !isRun) continue;
      for (const e of h) all.push({ id: isRoot ? 'root' : 'run', e });
    }
    const slow = [...calls.slice(5)].sort((a, b) => b.ms - a.ms).slice(0, 2);
    for (const c of slow) {
      console.log(`--- ${c.name} ${c.ms.toFixed(1)} ms`);
      for (const { id, e } of all.filter(({ e }) => eventMs(e) >= c.at - 5 && eventMs(e) <= c.at + c.ms + 5).sort((a, b) => eventMs(a.e) - eventMs(b.e))) {
        const act = e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.workflowExecutionSignaledEventAttributes?.signalName ?? e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? '';
        console.log(`  ${(eventMs(e) - c.at).toFixed(1).padStart(7)} ${id.padEnd(22).slice(0, 22)} ${eventName(e)} ${act}`);
      }
    }
    await agents.closeAll();
    await temporal.close();
  } finally { await teardown.run(); }
  process.exit(0);
})();
