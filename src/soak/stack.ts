import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeWorkflowBundle } from '../devstack/bundle';
import { startDevServer, type DevServer } from '../devstack/devServer';
import { freePort, projectRoot, startProcess, waitForHttp } from '../devstack/dipperProcess';

export interface SoakStack {
  gatewayUrl: string;
  namespace: string;
  operatorToken: string;
  temporalAddress: string;
  bundlePath: string;
  dataDir: string;
  tokenSecret: string;
  /** The iSphere bridge simulator the soak's sends go to (dedupe off: a blind resend shows), and its control token. */
  sim: { url: string; controlToken: string };
  /** The secret the soak's approval webhook calls are signed with (system `soak`). */
  webhookSecret: string;
  /** SIGKILLs the worker: a crash, with no chance to finish anything. */
  killWorker(): Promise<void>;
  startWorker(): void;
  /** SIGKILLs the gateway; calls in flight end without an answer. */
  killGateway(): Promise<void>;
  /** Starts the gateway again on its port; resolves once it answers. */
  startGateway(): Promise<void>;
  /** SIGKILLs the Temporal server, which keeps its state in a file (the in-memory default would lose it). */
  killTemporal(): Promise<void>;
  /** Starts the Temporal server again on the same port and file; resolves once its namespace is served. */
  startTemporal(): Promise<void>;
  stop(): Promise<void>;
}

export interface SoakStackOptions {
  dataRoot: string;
  /** First port to try for Temporal; the gateway takes the first free port from basePort + 500. */
  basePort: number;
  env?: Record<string, string>;
  /** Extra environment for the gateway alone. */
  gatewayEnv?: Record<string, string>;
  /** A workflow bundle of today's code already built (the test run's); built here when absent. */
  bundlePath?: string;
  /** Temporal's state on a file, so that the server can be killed and come back with it (in memory otherwise: faster). */
  temporalOnFile?: boolean;
}

/**
 * Everything the soak talks to, as `npm start` runs it but on ports and a
 * data folder of its own, with a Temporal dev server in memory: a Temporal
 * server, one workflow bundle, and the worker and gateway as processes, so
 * the worker can be killed like any crashed process.
 */
export async function startSoakStack(opts: SoakStackOptions): Promise<SoakStack> {
  fs.rmSync(opts.dataRoot, { recursive: true, force: true });
  const dataDir = path.join(opts.dataRoot, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const temporalPort = await freePort(opts.basePort, 1000);
  const gatewayPort = await freePort(opts.basePort + 500);
  const serverOptions = {
    projectRoot,
    port: temporalPort,
    uiPort: temporalPort + 1000,
    headless: true,
    logFile: path.join(opts.dataRoot, 'temporal.log'),
    // On a file, a killed server comes back with every workflow (the soak's own server: never reused).
    ...(opts.temporalOnFile ? { dbFile: path.join(opts.dataRoot, 'temporal.db') } : {}),
    reuse: false,
  };
  let server: DevServer = await startDevServer(serverOptions);
  const bundlePath = opts.bundlePath ?? path.join(opts.dataRoot, 'workflow-bundle.js');
  if (!opts.bundlePath) await writeWorkflowBundle(bundlePath);
  const operatorToken = `dpo_soak_${crypto.randomBytes(12).toString('hex')}`;
  const tokenSecret = crypto.randomBytes(32).toString('hex');
  const simPort = await freePort(gatewayPort + 3);
  const sim = { url: `http://127.0.0.1:${simPort}`, controlToken: `dsc_soak_${crypto.randomBytes(12).toString('hex')}` };
  const webhookSecret = crypto.randomBytes(24).toString('hex');
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'dipper',
    DIPPER_DATA_DIR: dataDir,
    DIPPER_SKILLS_DIR: path.join(projectRoot, 'test', 'fixtures', 'skills'),
    DIPPER_PORT: String(gatewayPort),
    DIPPER_OPERATOR_TOKEN: operatorToken,
    DIPPER_TOKEN_SECRET: tokenSecret,
    DIPPER_WORKFLOW_BUNDLE: bundlePath,
    DIPPER_LOG_LEVEL: 'warn',
    DIPPER_STACK_FILE: path.join(opts.dataRoot, 'stack.json'),
    ...opts.env,
    // The soak's own Task service, whatever the caller's environment says: its keyed creates are counted on it.
    DIPPER_TASK_SERVICE_PORT: String(await freePort(gatewayPort + 2)),
    DIPPER_TASK_ADMIN_KEY: `dtk_soak_${crypto.randomBytes(12).toString('hex')}`,
    DIPPER_ISPHERE_BRIDGE_URL: sim.url,
    DIPPER_ISPHERE_BRIDGE_TOKEN: `dbt_soak_${crypto.randomBytes(12).toString('hex')}`,
    DIPPER_ISPHERE_BRIDGE_TIMEOUT_MS: '2000',
    DIPPER_ISPHERE_POLICY_FILE: path.join(projectRoot, 'test', 'fixtures', 'isphere', 'policy.json'),
    DIPPER_ISPHERE_WEBHOOK_SECRETS: `soak:${webhookSecret}`,
  };
  delete env.DIPPER_TASK_API_URL;
  const log = (what: string) => path.join(opts.dataRoot, `${what}.log`);
  const tasks = startProcess('taskservice', { ...env, DIPPER_TASK_SERVICE_DB: path.join(dataDir, 'tasks.db') }, log('taskservice'));
  const bridge = startProcess(
    'isphere/bridgeSim',
    { DIPPER_ISPHERE_BRIDGE_TOKEN: env.DIPPER_ISPHERE_BRIDGE_TOKEN, DIPPER_ISPHERE_SIM_CONTROL_TOKEN: sim.controlToken, DIPPER_ISPHERE_SIM_PORT: String(simPort) },
    log('isphere-sim'),
  );
  let worker = startProcess('worker', env, log('worker'));
  const gatewayEnv = { ...env, ...opts.gatewayEnv };
  let gateway = startProcess('gateway', gatewayEnv, log('gateway'));
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitForHttp(`${gatewayUrl}/healthz`, 60_000);
  await waitForHttp(`http://127.0.0.1:${env.DIPPER_TASK_SERVICE_PORT}/healthz`, 60_000);
  await waitForHttp(`${sim.url}/healthz`, 60_000);
  // Every send delivers: a resend Dipper made blindly would show as a second delivery.
  await fetch(`${sim.url}/_sim/config`, { method: 'POST', headers: { authorization: `Bearer ${sim.controlToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ dedupe: false }) });
  return {
    gatewayUrl,
    namespace: 'dipper',
    operatorToken,
    temporalAddress: server.address,
    bundlePath,
    dataDir,
    tokenSecret,
    sim,
    webhookSecret,
    killWorker: () => worker.kill('SIGKILL'),
    startWorker() {
      worker = startProcess('worker', env, log('worker'));
    },
    killGateway: () => gateway.kill('SIGKILL'),
    async startGateway() {
      gateway = startProcess('gateway', gatewayEnv, log('gateway'));
      await waitForHttp(`${gatewayUrl}/healthz`, 60_000);
    },
    async killTemporal() {
      if (!opts.temporalOnFile) throw new Error('the soak stack keeps Temporal in memory: a kill would lose everything (temporalOnFile)');
      if (server.pid !== undefined) process.kill(server.pid, 'SIGKILL');
      await server.exited;
    },
    async startTemporal() {
      server = await startDevServer(serverOptions);
    },
    async stop() {
      await gateway.kill();
      await worker.kill();
      await tasks.kill();
      await bridge.kill();
      await server.stop();
    },
  };
}
