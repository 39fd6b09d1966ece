import { Command } from 'commander';
import crypto from 'node:crypto';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describeSoak, medianMax, runSoak, type SoakReport } from './soak';

import { projectRoot } from '../devstack/dipperProcess';

const program = new Command('soak')
  .description('crash soak: a team works while the worker is SIGKILLed at seeded random moments; then every history is replayed')
  .option('--seed <n>', 'first seed (random when absent; always printed)')
  .option('--runs <n>', 'soaks to run, with seeds seed, seed+1, ...', '1')
  .option('--kills <n>', 'worker kills per soak', '10')
  .option('--agents <n>', 'members spawned at the start (half as many more join mid-soak)', '8')
  .option('--warmup <s>', 'seconds of traffic before the first kill', '20')
  .option('--down <s>', 'a killed process stays down a random time up to this many seconds before it is started again (0: at once, as a supervisor would)', '3')
  .option('--sticky <ms>', 'sticky queue timeout of the worker (DIPPER_STICKY_TIMEOUT_MS)', '2000')
  .option('--unbounded-queries', 'let the gateway\'s Queries outlive the sticky timeout, as before the fix (the workflows\' guard must hold alone)')
  .option('--repair', 'repair what the replay finds (dipper doctor --repair), then check again')
  .option('--matrix', 'the crash matrix: of the kills, 2 are the gateway\'s and 1 the Temporal server\'s (at least 9 kills, 10 agents, 20 messages a second)')
  .option('--rate <n>', 'send_message calls offered per second besides the members\' own (default 20 with --matrix, else 0)')
  .option('--commit-seeds', 'seeds derived from the checked-out commit (seeds nobody tuned for); --runs of them')
  .action(async (opts: { seed?: string; runs: string; kills: string; agents: string; warmup: string; sticky: string; unboundedQueries?: boolean; repair?: boolean; matrix?: boolean; rate?: string; commitSeeds?: boolean; down: string }) => {
    const first = opts.seed === undefined ? crypto.randomInt(1, 1_000_000) : Number(opts.seed);
    const seeds = Array.from({ length: Number(opts.runs) }, (_, i) => (opts.commitSeeds ? commitSeed(i) : first + i));
    if (opts.commitSeeds) process.stdout.write(`seeds of commit ${head().slice(0, 12)}: ${seeds.join(', ')}\n`);
    const reports: SoakReport[] = [];
    for (const seed of seeds) {
      process.stdout.write(`soak seed ${seed}\n`);
      const report = await runSoak({
        seed,
        kills: opts.matrix ? Math.max(9, Number(opts.kills)) : Number(opts.kills),
        agents: opts.matrix ? Math.max(10, Number(opts.agents)) : Number(opts.agents),
        ...(opts.matrix ? { matrix: { gateway: 2, temporal: 1 } } : {}),
        warmupSeconds: Number(opts.warmup),
        killEverySeconds: [2, 8],
        maxDownSeconds: Number(opts.down),
        pauseMs: 300,
        offerPerSecond: Number(opts.rate ?? (opts.matrix ? 20 : 0)),
        dataRoot: path.join(projectRoot, '.soak-data', `seed-${seed}`),
        basePort: 39233,
        // DIPPER_LOG_LEVEL=info in the soak's environment: the stack's logs say when each process came up.
        env: { DIPPER_STICKY_TIMEOUT_MS: opts.sticky, ...(process.env.DIPPER_LOG_LEVEL ? { DIPPER_LOG_LEVEL: process.env.DIPPER_LOG_LEVEL } : {}) },
        // The gateway caps each Query a second below its own idea of the sticky timeout.
        gatewayEnv: opts.unboundedQueries ? { DIPPER_STICKY_TIMEOUT_MS: '600000' } : undefined,
        repair: opts.repair === true,
        progress: (line) => process.stdout.write(`  ${line}\n`),
      });
      process.stdout.write(`${describeSoak(report)}\n`);
      reports.push(report);
    }
    if (reports.length > 1) process.stdout.write(`${describeRuns(reports)}\n`);
    process.exitCode = reports.every((r) => r.passed) ? 0 : 1;
  });

function head(): string {
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: projectRoot, encoding: 'utf8' }).trim();
}

/** The i-th seed of the checked-out commit: from its hash, so nobody picked it. */
function commitSeed(i: number): number {
  return (parseInt(crypto.createHash('sha256').update(`${head()}:${i}`).digest('hex').slice(0, 8), 16) % 999_999) + 1;
}

/** The figures over every run: how many passed, and recovery over all their kills of each kind. */
function describeRuns(reports: SoakReport[]): string {
  const killed = reports.flatMap((r) => r.killed);
  const recovery = reports.flatMap((r) => r.recoverySeconds);
  const outage = reports.flatMap((r) => r.outageSeconds);
  const lines = [`${reports.filter((r) => r.passed).length} of ${reports.length} seeds passed (${reports.filter((r) => !r.passed).map((r) => r.seed).join(', ') || 'none failed'})`];
  for (const victim of ['worker', 'gateway', 'temporal'] as const) {
    const rec = medianMax(recovery, killed, victim);
    const out = medianMax(outage, killed, victim);
    if (rec.n > 0) lines.push(`  ${rec.n} ${victim} kills: answering ${rec.median.toFixed(1)} s median, ${rec.max.toFixed(1)} s max after the restart; ${out.median.toFixed(1)} s / ${out.max.toFixed(1)} s after the kill`);
  }
  const rates = reports.map((r) => r.messages.offeredPerSecond);
  lines.push(`  send_message offered ${Math.min(...rates).toFixed(1)}-${Math.max(...rates).toFixed(1)} a second; untrue answers ${reports.reduce((n, r) => n + r.messages.untrue.length, 0)}; lost ${reports.reduce((n, r) => n + r.lost, 0)}, duplicated ${reports.reduce((n, r) => n + r.duplicated, 0)}`);
  return lines.join('\n');
}

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
