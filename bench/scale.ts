/**
 * Issue 41's scale scenario, apart from the bench's latency run (it takes
 * long and never runs in CI): `npm run bench:scale -- [--agents 10000]
 * [--per-run 10] [--at 1000,5000,10000] [--window 30] [--calls 200]`.
 * Builds runs of `per-run` agents on the bench's embedded stack and, at
 * each checkpoint, reports the processes' memory, what every agent built
 * so far costs while each holds its runtime's long poll, and send_message
 * and list_peers from agents of random runs. Writes docs/scale.md when it
 * reached the default 10,000 agents; prints its table either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../test/support/processes';
import { Agents } from './client';
import { scaleScenario, type ScaleLine } from './scenarios/scale';
import { startStack, Teardown } from './stack';

const DEFAULTS = { agents: 10_000, perRun: 10, at: [1_000, 5_000, 10_000], window: 30, calls: 200 };

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? argv[at + 1] : undefined;
}

const dash = '—';
const f = (x: number | undefined, digits = 0) => (x === undefined || !Number.isFinite(x) ? dash : x.toFixed(digits));

export function scaleTable(lines: ScaleLine[]): string {
  const header = [
    'agents (runs)',
    'built in, s',
    'RSS worker / gateway / Temporal, MiB',
    'long polls: Temporal calls/s (answers/s, refused/s)',
    'CPU Temporal / worker / gateway',
    'send_message p50 / p99 ms',
    'list_peers p50 / p99 ms',
    'errors (send, list)',
  ];
  const rows = lines.map((l) => [
    `${l.agents.toLocaleString('en-US')} (${l.runs})`,
    f(l.buildSeconds),
    `${f(l.rss.worker)} / ${f(l.rss.gateway)} / ${f(l.rss['Temporal dev server'])}`,
    `${f(l.polling.callsPerSecond, 1)} (${f(l.answers.perSecond, 1)}, ${f(l.answers.refusedPerSecond, 1)})`,
    `${f(l.polling.cpu['Temporal dev server'], 1)} / ${f(l.polling.cpu.worker, 1)} / ${f(l.polling.cpu.gateway, 1)} %`,
    `${f(l.send.p50, 1)} / ${f(l.send.p99, 1)}`,
    `${f(l.peers.p50, 1)} / ${f(l.peers.p99, 1)}`,
    `${l.send.errors}, ${l.peers.errors}`,
  ]);
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [row(header), row(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(row)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const agentsWanted = Number(option(argv, 'agents') ?? DEFAULTS.agents);
  const perRun = Number(option(argv, 'per-run') ?? DEFAULTS.perRun);
  const at = (option(argv, 'at')?.split(',').map(Number) ?? DEFAULTS.at).filter((n) => n <= agentsWanted);
  const checkpoints = at.at(-1) === agentsWanted ? at : [...at, agentsWanted];
  const windowSeconds = Number(option(argv, 'window') ?? DEFAULTS.window);
  const calls = Number(option(argv, 'calls') ?? DEFAULTS.calls);
  if (![agentsWanted, perRun, windowSeconds, calls, ...checkpoints].every((n) => Number.isInteger(n) && n > 0) || perRun < 2) {
    process.stderr.write('usage: npm run bench:scale -- [--agents N] [--per-run N≥2] [--at N,N,…] [--window S] [--calls N]\n');
    return 2;
  }
  const started = performance.now();
  const progress = (m: string) => process.stderr.write(`scale [${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${m}\n`);
  const teardown = new Teardown();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void teardown.run().finally(() => process.exit(130)));
  const dataRoot = path.join(projectRoot, '.bench-data', `scale-${process.pid}`);
  try {
    const stack = await startStack(dataRoot, teardown, progress);
    const agents = new Agents(stack.gatewayUrl, stack.operatorToken);
    teardown.add("the agents' MCP clients", () => agents.closeAll());
    const lines = await scaleScenario(agents, {
      agents: agentsWanted,
      perRun,
      checkpoints,
      windowSeconds,
      calls,
      metricsUrl: stack.temporalMetricsUrl,
      pids: { worker: stack.pids.worker, gateway: stack.pids.gateway, 'Temporal dev server': stack.pids.temporal },
      progress,
    });
    const table = scaleTable(lines);
    process.stdout.write(`\n${table}\n`);
    if (agentsWanted === DEFAULTS.agents && perRun === DEFAULTS.perRun) {
      const cpus = os.cpus();
      const doc = [
        '# Scale',
        '',
        'Written by `npm run bench:scale` (bench/scale.ts); run it again rather than editing the figures by hand.',
        '',
        `- Date: ${new Date().toISOString()}; ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), Node ${process.version}; ${((performance.now() - started) / 1000).toFixed(0)} s in all`,
        `- Runs of ${perRun} agents (a root and its team of ${perRun - 1}), built one after another on the bench's embedded stack (one worker, one gateway, the Temporal dev server in memory).`,
        '',
        table,
        '',
        `At each line: resident memory (VmRSS) of each process; then every agent built so far holding its runtime's long poll (wait_ms 20 s, asked again when answered) over a ${windowSeconds} s window, after 10 s to settle: Temporal frontend calls per second, beside the polls' answers per second (with every poll live and idle, about one agent in 20 a second) and refusals per second (answered at once, at no Temporal cost), and CPU per process in percent of one core; then ${calls} send_message calls, each to a random agent of the sender's run, and as many list_peers (scope team), from 50 agents of random runs, one after another. Most agents' workflows have left the worker's cache by then, so the sends include cold agents.`,
        '',
      ].join('\n');
      fs.writeFileSync(path.join(projectRoot, 'docs', 'scale.md'), doc);
    }
    return 0;
  } finally {
    await teardown.run();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:scale failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
