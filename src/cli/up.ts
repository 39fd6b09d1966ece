import { keepFilesPrivate } from '../private';
import path from 'node:path';
import { loadOrCreateSecrets, taskAdminKey } from '../auth/secrets';
import { temporalTarget, type DipperConfig } from '../config';
import { taskServiceEnv } from '../taskservice/env';
import { writeWorkflowBundle } from '../devstack/bundle';
import { ensureNamespace, loadTemporalDevConfig, startDevServer } from '../devstack/devServer';
import { waitForPort } from '../devstack/processes';
import { bannerLines } from './banner';
import { whyUpCannotStart } from './preflight';
import { projectRoot } from '../common/projectRoot';
import { newStackRecord, readLiveStack, removeOwnStackRecord, writeStackRecord } from './stackRecord';
import { startRun } from './startRun';
import { type Running, type Supervised, startNode, supervise } from '../devstack/supervise';

/** `dipper up`: Temporal (bundled dev server or the configured one), then the worker and the gateway. */
export interface UpOptions {
  /** Task of the run started for you once everything is up; null starts none. */
  task: string | null;
}

/** npm hands the terminal's Ctrl-C on a second time; a repeat within this window is the same keypress. */
const sameSignalMs = 2000;
/** How long the banner waits for the processes' start-up to be over (a promotion waiting on other hosts can take longer). */
const STARTED_WAIT_MS = 60_000;

/**
 * This process is the supervisor: it restarts Temporal, the worker and the
 * gateway when they die, and they die with it (see spawnTied).
 */
export async function up(config: DipperConfig, opts: UpOptions): Promise<void> {
  // Before the data folder, the secrets file or the Temporal database exist; the children inherit it.
  keepFilesPrivate();
  const other = readLiveStack(config.stackFile);
  const refusal = await whyUpCannotStart(config, other);
  if (refusal) {
    process.stderr.write(`dipper: ${refusal}\n`);
    process.exitCode = 1;
    return;
  }
  if (other) process.stderr.write(`dipper: another Dipper stack runs (pid ${other.pid}, ${other.gatewayUrl}); commands will reach this one\n`);
  const devConfig = loadTemporalDevConfig(projectRoot);
  // Before the children start, so the worker and the gateway read one secrets file rather than racing to create it.
  const { operatorToken } = loadOrCreateSecrets(config);
  const bundled = !config.temporal.address;
  const record = newStackRecord(config, bundled ? `http://127.0.0.1:${config.temporal.uiPort}` : null);
  const recordPid = (name: string) => (pid: number | undefined) => {
    record.processes[name] = pid;
    try {
      writeStackRecord(config.stackFile, record);
    } catch (err) {
      // A stale pid in the record is no reason to stop supervising.
      process.stderr.write(`dipper: could not update ${config.stackFile} (${(err as Error).message})\n`);
    }
  };
  writeStackRecord(config.stackFile, record);
  process.once('exit', () => removeOwnStackRecord(config.stackFile));

  let temporal: Supervised | undefined;
  const apps: Supervised[] = [];
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < sameSignalMs) return;
      process.stderr.write('dipper: stopping now\n');
      process.exit(1);
    }
    stoppingSince = Date.now();
    process.stderr.write(`dipper: ${signal}; stopping the gateway, the worker and Temporal\n`);
    // The worker and gateway first, so the worker does not lose its server while draining.
    await Promise.all(apps.map((app) => app.stop()));
    await temporal?.stop();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal));

  if (bundled) {
    const startTemporal = async (): Promise<Running> =>
      startDevServer({
        projectRoot,
        port: config.temporal.devPort,
        uiPort: config.temporal.uiPort,
        dbFile: path.join(config.dataDir, 'temporal.db'),
        logFile: path.join(config.dataDir, 'temporal.log'),
        namespace: config.temporal.namespace,
        reuse: false,
      });
    temporal = await supervise('Temporal', startTemporal, recordPid('temporal'));
  } else {
    await ensureNamespace(temporalTarget(config), config.temporal.namespace, devConfig.searchAttributes);
  }
  if (stoppingSince !== undefined) return;

  // Absolute paths, so the children resolve the same folders whatever their working directory.
  const env: NodeJS.ProcessEnv = { ...process.env, DIPPER_DATA_DIR: config.dataDir, DIPPER_SKILLS_DIR: config.skillsDir };
  // The operator console links to the UI of the Temporal server started here, unless told of another.
  if (record.temporal.uiUrl && !env.DIPPER_TEMPORAL_UI_URL) env.DIPPER_TEMPORAL_UI_URL = record.temporal.uiUrl;
  // Both reconnect by themselves when Temporal comes back, so a Temporal restart leaves them alone.
  // On its own dev server this stack's worker is the only one: its version is made current whatever was (a checkout
  // switched back to an earlier commit included). On a shared server the rule for many workers applies (src/versioning).
  const workerEnv: NodeJS.ProcessEnv = bundled ? { DIPPER_PROMOTE_VERSION: 'always', ...env } : { ...env };
  // The workflows bundled once, here: a worker restarted after a crash loads the file in a moment instead of
  // bundling again (seconds of webpack on a busy machine, every restart) and runs the same code as before.
  if (!workerEnv.DIPPER_WORKFLOW_BUNDLE) {
    workerEnv.DIPPER_WORKFLOW_BUNDLE = path.join(config.dataDir, 'workflow-bundle.js');
    await writeWorkflowBundle(workerEnv.DIPPER_WORKFLOW_BUNDLE);
  }
  // Each process's first start says when it is over: the banner waits for them all, so it comes after their start-up logs.
  const started: Promise<void>[] = [];
  const first = (start: () => Promise<Running>) => {
    let seen = false;
    return async () => {
      const running = await start();
      if (!seen && running.started) started.push(running.started);
      seen = true;
      return running;
    };
  };
  for (const name of ['worker', 'gateway'] as const) {
    apps.push(await supervise(name, first(() => startNode(name, name === 'worker' ? workerEnv : env)), recordPid(name)));
  }
  // The embedded reference Task service, unless the agentteam tools are pointed at another (DIPPER_TASK_API_URL).
  if (!config.taskApi.url) {
    const taskEnv = { ...env, ...taskServiceEnv(config, taskAdminKey(config, loadOrCreateSecrets(config))) };
    apps.push(await supervise('task service', first(() => startNode('taskservice', taskEnv)), recordPid('taskservice')));
  }

  const probeHost = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host;
  if (!(await waitForPort(config.port, probeHost, 60_000))) {
    process.stderr.write(`dipper: the gateway is not listening on ${probeHost}:${config.port} yet; its output above may say why\n`);
  }
  await Promise.race([Promise.all(started), new Promise((r) => setTimeout(r, STARTED_WAIT_MS).unref())]);
  if (stoppingSince !== undefined) return;
  process.stdout.write(bannerLines(config, operatorToken, record.temporal.uiUrl ?? 'external server').join('\n'));
  // A run ready to drive: paste its MCP config into Claude Code or the MCP Inspector and you are its root agent.
  if (opts.task !== null) {
    process.stdout.write('A run for you to drive as its root agent:\n');
    await startRun(config, opts.task);
  }
}
