import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeWorkflowBundle } from '../devstack/bundle';
import { startDevServer, type DevServer } from '../devstack/devServer';
import { isListening } from '../devstack/processes';

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
  projectRoot: string;
  dataRoot: string;
  /** First port to try for Temporal; the gateway takes the first free port from basePort + 500. */
  basePort: number;
  env?: Record<string, string>;
  /** Extra environment for the gateway alone. */
  gatewayEnv?: Record<string, string>;
}

/** A process of the stack, its output appended to a log file. */
function startNode(projectRoot: string, which: 'worker' | 'gateway', env: Record<string, string>, log: string): ChildProcess {
  const out = fs.openSync(log, 'a');
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'src', which, 'main.ts')], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  return proc;
}

function exited(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => proc.once('exit', () => resolve()));
}

async function freePort(from: number): Promise<number> {
  for (let port = from; port < from + 100; port++) if (!(await isListening(port)) && !(await isListening(port + 1000))) return port;
  throw new Error(`no free port from ${from}`);
}

async function untilHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
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
  const temporalPort = await freePort(opts.basePort);
  const gatewayPort = await freePort(opts.basePort + 500);
  const server: DevServer = await startDevServer({
    projectRoot: opts.projectRoot,
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
    DIPPER_SKILLS_DIR: path.join(opts.projectRoot, 'test', 'fixtures', 'skills'),
    DIPPER_PORT: String(gatewayPort),
    DIPPER_OPERATOR_TOKEN: operatorToken,
    DIPPER_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
    DIPPER_WORKFLOW_BUNDLE: bundlePath,
    DIPPER_LOG_LEVEL: 'warn',
    DIPPER_STACK_FILE: path.join(opts.dataRoot, 'stack.json'),
    ...opts.env,
  };
  const log = (what: string) => path.join(opts.dataRoot, `${what}.log`);
  let worker = startNode(opts.projectRoot, 'worker', env, log('worker'));
  const gateway = startNode(opts.projectRoot, 'gateway', { ...env, ...opts.gatewayEnv }, log('gateway'));
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  await untilHealthy(`${gatewayUrl}/healthz`, 60_000);
  return {
    gatewayUrl,
    namespace: 'dipper',
    operatorToken,
    temporalAddress: server.address,
    bundlePath,
    async killWorker() {
      worker.kill('SIGKILL');
      await exited(worker);
    },
    startWorker() {
      worker = startNode(opts.projectRoot, 'worker', env, log('worker'));
    },
    async stop() {
      for (const p of [gateway, worker]) {
        p.kill('SIGTERM');
        const force = setTimeout(() => p.kill('SIGKILL'), 5000);
        await exited(p);
        clearTimeout(force);
      }
      await server.stop();
    },
  };
}
