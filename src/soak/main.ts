import { Command } from 'commander';
import crypto from 'node:crypto';
import path from 'node:path';
import { describeSoak, runSoak } from './soak';

import { projectRoot } from '../devstack/dipperProcess';

const program = new Command('soak')
  .description('crash soak: a team works while the worker is SIGKILLed at seeded random moments; then every history is replayed')
  .option('--seed <n>', 'first seed (random when absent; always printed)')
  .option('--runs <n>', 'soaks to run, with seeds seed, seed+1, ...', '1')
  .option('--kills <n>', 'worker kills per soak', '10')
  .option('--agents <n>', 'members spawned at the start (half as many more join mid-soak)', '8')
  .option('--warmup <s>', 'seconds of traffic before the first kill', '20')
  .option('--sticky <ms>', 'sticky queue timeout of the worker (DIPPER_STICKY_TIMEOUT_MS)', '5000')
  .option('--unbounded-queries', 'let the gateway\'s Queries outlive the sticky timeout, as before the fix (the workflows\' guard must hold alone)')
  .option('--repair', 'repair what the replay finds (dipper doctor --repair), then check again')
  .option('--matrix', 'the crash matrix: of the kills, 2 are the gateway\'s and 1 the Temporal server\'s (at least 9 kills, 10 agents)')
  .action(async (opts: { seed?: string; runs: string; kills: string; agents: string; warmup: string; sticky: string; unboundedQueries?: boolean; repair?: boolean; matrix?: boolean }) => {
    const first = opts.seed === undefined ? crypto.randomInt(1, 1_000_000) : Number(opts.seed);
    let failed = 0;
    for (let i = 0; i < Number(opts.runs); i++) {
      const seed = first + i;
      process.stdout.write(`soak seed ${seed}\n`);
      const report = await runSoak({
        seed,
        kills: opts.matrix ? Math.max(9, Number(opts.kills)) : Number(opts.kills),
        agents: opts.matrix ? Math.max(10, Number(opts.agents)) : Number(opts.agents),
        ...(opts.matrix ? { matrix: { gateway: 2, temporal: 1 } } : {}),
        warmupSeconds: Number(opts.warmup),
        killEverySeconds: [2, 8],
        maxDownSeconds: 3,
        pauseMs: 300,
        dataRoot: path.join(projectRoot, '.soak-data', `seed-${seed}`),
        basePort: 39233,
        env: { DIPPER_STICKY_TIMEOUT_MS: opts.sticky },
        // The gateway caps each Query a second below its own idea of the sticky timeout.
        gatewayEnv: opts.unboundedQueries ? { DIPPER_STICKY_TIMEOUT_MS: '600000' } : undefined,
        repair: opts.repair === true,
        progress: (line) => process.stdout.write(`  ${line}\n`),
      });
      process.stdout.write(`${describeSoak(report)}\n`);
      if (!report.passed) failed++;
    }
    process.exitCode = failed === 0 ? 0 : 1;
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
