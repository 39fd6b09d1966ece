import { Temporal } from '../src/temporal';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalAddress } from '../src/config';
import { projectRoot } from '../test/support/processes';
import { Agents, type BenchRun } from './client';
import { Row, type BenchContext, type Counts } from './measure';
import { rssMiB } from './memory';
import { failures, figuresTable, idleTable, memoryTable, renderReport, type MemoryLine } from './report';
import { targetsTable } from './targets';
import { idleCost, type IdleLine } from './scenarios/idlePolls';
import { fanInScenario } from './scenarios/fanIn';
import { listPeersScenario } from './scenarios/listPeers';
import { noopScenario } from './scenarios/noop';
import { sendLongMessageScenario, sendMessageScenario } from './scenarios/sendMessage';
import { spawnAgentScenario } from './scenarios/spawnAgent';
import { planScenario } from './scenarios/plan';
import { askUserScenario } from './scenarios/askUser';
import { taskBoardScenario } from './scenarios/taskBoard';
import { temporalQueryScenario } from './scenarios/temporalQuery';
import { childStartsScenario, workflowStartScenario } from './scenarios/temporalStart';
import { temporalUpdateScenario } from './scenarios/temporalUpdate';
import { startStack, Teardown } from './stack';

/** A few minutes on two cores. */
const FULL: Counts = { warmup: 20, noop: 300, update: 300, query: 300, send: 300, peers: 200, spawn: 50, starts: 50, childBursts: 10, ask: 40, bursts: 5, bigRun: 1000, idleSeconds: 40 };
/** A smoke run under a minute: about a tenth of the calls and a 200-agent large run. */
const QUICK: Counts = { warmup: 3, noop: 30, update: 30, query: 30, send: 30, peers: 20, spawn: 5, starts: 5, childBursts: 2, ask: 5, bursts: 2, bigRun: 200, idleSeconds: 10 };

const USAGE = 'usage: npm run bench [-- --quick] [--only <scenario>]   (or DIPPER_BENCH_QUICK=1)\n';

async function main(argv: string[]): Promise<number> {
  // --only <text>: the floors and the scenarios whose name contains text; prints its table, writes no docs.
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined;
  const unknown = argv.filter((a, i) => a !== '--quick' && !(onlyAt >= 0 && (i === onlyAt || i === onlyAt + 1)));
  if (unknown.length > 0 || (onlyAt >= 0 && !only)) {
    process.stderr.write(`bench: ${unknown.length > 0 ? `unknown argument ${unknown[0]}` : '--only needs a scenario name'}\n${USAGE}`);
    return 2;
  }
  const quick = argv.includes('--quick') || process.env.DIPPER_BENCH_QUICK === '1';
  const counts = quick ? QUICK : FULL;
  const started = performance.now();
  const progress = (message: string) =>
    process.stderr.write(`bench [${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);

  const teardown = new Teardown();
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      // Calls fail from here on; the flag keeps their errors out of docs/performance.md.
      interrupted = true;
      process.stderr.write(`bench: ${signal}; stopping everything it started\n`);
      void teardown.run().finally(() => process.exit(130));
    });
  }

  const dataRoot = path.join(projectRoot, '.bench-data', `run-${process.pid}`);
  const rows: Row[] = [];
  let code = 1;
  try {
    const stack = await startStack(dataRoot, teardown, progress);
    const temporal = await Temporal.connect({ address: temporalAddress(stack.config), namespace: stack.config.temporal.namespace });
    teardown.add('the Temporal client', () => temporal.close());
    const agents = new Agents(stack.gatewayUrl, stack.operatorToken);
    teardown.add("the agents' MCP clients", () => agents.closeAll());
    const ctx: BenchContext = {
      agents,
      temporal,
      taskQueue: stack.config.temporal.taskQueue,
      counts,
      row: (name, against, floor) => {
        const row = new Row(name, against, floor);
        rows.push(row);
        return row;
      },
    };
    // A scenario that throws is one failed line in the table; the others still run.
    const scenario = async (name: string, run: () => Promise<void>) => {
      if (interrupted) return;
      if (only && !name.includes('floor') && !name.includes(only)) return;
      progress(name);
      try {
        await run();
      } catch (err) {
        ctx.row(`${name}: did not finish`, []).fail(err);
      }
    };

    await scenario('no-op floor', () => noopScenario(ctx));
    await scenario('bare Update floor', () => temporalUpdateScenario(ctx));
    await scenario('bare Query floor', () => temporalQueryScenario(ctx));
    await scenario('workflow start floor', () => workflowStartScenario(ctx));
    await scenario('child starts floor', () => childStartsScenario(ctx));
    await scenario('send_message', () => sendMessageScenario(ctx));
    await scenario('send_message, long', () => sendLongMessageScenario(ctx));
    await scenario('list_peers, 10 agents', async () => void (await listPeersScenario(ctx, 10)));
    await scenario('spawn_agent', () => spawnAgentScenario(ctx));
    await scenario('declare_plan and remove_plan', () => planScenario(ctx));
    await scenario('fan-in', () => fanInScenario(ctx));
    await scenario('ask_user, 1 hop', () => askUserScenario(ctx, 1));
    await scenario('ask_user, 3 hops', () => askUserScenario(ctx, 3));
    await scenario('task board', () => taskBoardScenario(ctx, stack.config));
    // Last, so its thousand live workflows weigh on no other figure.
    const watched = [
      ['worker', stack.pids.worker],
      ['gateway', stack.pids.gateway],
      ['Temporal dev server', stack.pids.temporal],
    ] as const;
    const before = watched.map(([, pid]) => rssMiB(pid));
    let bigRun: BenchRun | undefined;
    await scenario(`list_peers, ${counts.bigRun.toLocaleString('en-US')} agents`, async () => {
      bigRun = await listPeersScenario(ctx, counts.bigRun);
    });
    const memory: MemoryLine[] = watched.map(([name, pid], i) => ({ process: name, before: before[i], after: rssMiB(pid) }));
    // The large run's members, idle, then long-polling: what idle agents cost (docs/performance.md, "Idle agents").
    let idle: IdleLine[] = [];
    const run = bigRun;
    if (run) {
      await scenario('idle cost', async () => {
        idle = await idleCost(agents, run, {
          seconds: counts.idleSeconds,
          waitMs: 20_000,
          metricsUrl: stack.temporalMetricsUrl,
          pids: Object.fromEntries(watched.map(([name, pid]) => [name, pid])),
          progress,
        });
      });
    }
    if (interrupted) return 130;

    const wallSeconds = (performance.now() - started) / 1000;
    const cpus = os.cpus();
    const report = renderReport({
      machine: {
        cpus: cpus.length,
        cpuModel: cpus[0]?.model.trim() ?? 'unknown',
        totalMemoryGiB: os.totalmem() / 1024 ** 3,
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
      },
      date: new Date(),
      quick,
      bigRun: counts.bigRun,
      rows,
      memory,
      idle,
      history: fs.readFileSync(path.join(projectRoot, 'bench', 'history.md'), 'utf8'),
      wallSeconds,
    });
    const docs = path.join(projectRoot, 'docs', 'performance.md');
    if (!only) {
      fs.mkdirSync(path.dirname(docs), { recursive: true });
      fs.writeFileSync(docs, report);
    }
    process.stdout.write(
      `\n${figuresTable(rows)}\n\n${targetsTable(rows)}\n\n${memoryTable(memory, counts.bigRun)}\n\n${idle.length > 0 ? `${idleTable(idle)}\n\n` : ''}${failures(rows)}` +
        `${quick ? 'quick' : 'full'} run, ${wallSeconds.toFixed(0)} s; ${only ? 'not written (--only)' : `written to ${path.relative(process.cwd(), docs)}`}\n`,
    );
    const errors = rows.reduce((sum, r) => sum + r.errors, 0);
    if (errors > 0) process.stderr.write(`bench: ${errors} call(s) failed; logs are kept in ${dataRoot}\n`);
    code = errors > 0 ? 1 : 0;
  } finally {
    await teardown.run();
  }
  if (code === 0) fs.rmSync(dataRoot, { recursive: true, force: true });
  return code;
}

// process.exit, not exitCode: a failed start may leave a poll loop behind that would otherwise hold the process open.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.stderr.write(`bench: logs are kept in ${path.join(projectRoot, '.bench-data', `run-${process.pid}`)}\n`);
    process.exit(1);
  },
);
