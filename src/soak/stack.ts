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
  /** SIGKILLs the worker: a crash, with no chance to finish anything. */
  killWorker(): Promise<void>;
  startWorker(): void;
  stop(): Promise<void>;
}

export interface SoakStackOptions {
  dataRoot: string;
  /** First port to try for Temporal; the gateway takes the first free port from basePort + 500. */
  basePort: number;
  env?: Record<string, string>;
  /** Extra environment for the gateway alone. */
  gatewayEnv?: Record<string, string>;
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
  const server: DevServer = await startDevServer({
    projectRoot,
    port: temporalPort,
    uiPort: temporalPort + 1000,
    headless: true,
    logFile: path.join(opts.dataRoot, 'temporal.log'),
  });
  const bundlePath = path.join(opts.dataRoot, 'workflow-bundle.js');
  await writeWorkflowBundle(bundlePath);
  const operatorToken = `dpo_soak_${crypto.randomBytes(12).toString('hex')}`;
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'dipper',
    DIPPER_DATA_DIR: dataDir,
    DIPPER_SKILLS_DIR: path.join(projectRoot, 'test', 'fixtures', 'skills'),
    DIPPER_PORT: String(gatewayPort),
    DIPPER_OPERATOR_TOKEN: operatorToken,
    DIPPER_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
    DIPPER_WORKFLOW_BUNDLE: bundlePath,
    DIPPER_LOG_LEVEL: 'warn',
    DIPPER_STACK_FILE: path.join(opts.dataRoot, 'stack.json'),
    ...opts.env,
    // The soak's own Task service, whatever the caller's environment says: its keyed creates are counted on it.
    DIPPER_TASK_SERVICE_PORT: String(await freePort(gatewayPort + 2)),
    DIPPER_TASK_ADMIN_KEY: `dtk_soak_${crypto.randomBytes(12).toString('hex')}`,
  };
  delete env.DIPPER_TASK_API_URL;
  const log = (what: string) => path.join(opts.dataRoot, `${what}.log`);
  const tasks = startProcess('taskservice', { ...env, DIPPER_TASK_SERVICE_DB: path.join(dataDir, 'tasks.db') }, log('taskservice'));
  let worker = startProcess('worker', env, log('worker'));
  const gateway = startProcess('gateway', { ...env, ...opts.gatewayEnv }, log('gateway'));
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitForHttp(`${gatewayUrl}/healthz`, 60_000);
  await waitForHttp(`http://127.0.0.1:${env.DIPPER_TASK_SERVICE_PORT}/healthz`, 60_000);
  return {
    gatewayUrl,
    namespace: 'dipper',
    operatorToken,
    temporalAddress: server.address,
    bundlePath,
    killWorker: () => worker.kill('SIGKILL'),
    startWorker() {
      worker = startProcess('worker', env, log('worker'));
    },
    async stop() {
      await gateway.kill();
      await worker.kill();
      await tasks.kill();
      await server.stop();
    },
  };
}
