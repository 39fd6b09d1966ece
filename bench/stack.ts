import crypto from 'node:crypto';
import fs from 'node:fs';
import { writeWorkflowBundle } from '../src/devstack/bundle';
import { removeStaleRunFolders } from '../src/devstack/scratch';
import os from 'node:os';
import path from 'node:path';
import { workerIsPolling } from '../src/devstack/workerHealth';
import { loadConfig, type DipperConfig } from '../src/config';
import { startDevServer } from '../src/devstack/devServer';
import { freePort, projectRoot, startProcess, waitForHttp, type DipperProcess } from '../src/devstack/dipperProcess';

/** Stops what was started, newest first; a step that fails does not keep the others from running. */
export class Teardown {
  private readonly steps: { name: string; run: () => Promise<void> }[] = [];
  private running: Promise<void> | undefined;

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** The same promise however often it is called, so a signal during the normal teardown waits for it. */
  run(): Promise<void> {
    this.running ??= this.runSteps();
    return this.running;
  }

  private async runSteps(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step.run();
      } catch (err) {
        process.stderr.write(`bench: stopping ${step.name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  }
}

export interface Stack {
  /** The configuration the worker and the gateway run with. */
  config: DipperConfig;
  gatewayUrl: string;
  operatorToken: string;
  pids: { worker?: number; gateway?: number; temporal?: number };
  /** The Temporal server's Prometheus endpoint. */
  temporalMetricsUrl: string;
  /** The folder the worker and gateway keep their files in (events.db with its inbox wakes, content.db). */
  dataDir: string;
}

/** What a caller may change about the stack. */
export interface StackOptions {
  /**
   * The address the worker and the gateway reach Temporal at, given the
   * server's (the tracer puts a recording proxy in between); by default the server's own.
   */
  temporalFor?: (serverAddress: string) => Promise<{ worker?: string; gateway?: string }>;
}

/** The first ports tried: DIPPER_BENCH_TEMPORAL_PORT and DIPPER_BENCH_GATEWAY_PORT, so two stacks on one machine need not meet. */
function basePort(name: string, fallback: number): number {
  const raw = process.env[name];
  const port = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(port) || port < 1024 || port > 65_000) throw new Error(`${name} must be a port number, not ${raw}`);
  return port;
}

/** Waits for `ready`, but fails as soon as the process it waits for has died. */
async function readyUnlessExited(ready: Promise<void>, proc: DipperProcess, what: string, logFile: string): Promise<void> {
  const outcome = await Promise.race([ready.then(() => 'ready' as const), proc.exited.then(() => 'exited' as const)]);
  if (outcome === 'exited') throw new Error(`the ${what} exited during start; see ${logFile}`);
}

/**
 * Everything the bench talks to, started as `npm test` starts it: a Temporal
 * dev server in memory on its own ports, one workflow bundle, and the worker
 * and gateway as separate processes with the bench surface on. Each piece is
 * handed to `teardown` as soon as it runs.
 */
export async function startStack(dataRoot: string, teardown: Teardown, progress: (message: string) => void, options: StackOptions = {}): Promise<Stack> {
  removeStaleRunFolders(path.dirname(dataRoot));
  const dataDir = path.join(dataRoot, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const temporalPort = await freePort(basePort('DIPPER_BENCH_TEMPORAL_PORT', 47233), 1000);
  const gatewayPort = await freePort(basePort('DIPPER_BENCH_GATEWAY_PORT', 47710));

  progress(`starting Temporal on 127.0.0.1:${temporalPort}`);
  const server = await startDevServer({
    projectRoot,
    port: temporalPort,
    uiPort: temporalPort + 1000,
    headless: true,
    logFile: path.join(dataRoot, 'temporal.log'),
  });
  teardown.add('Temporal', () => server.stop());

  // Outside the checkout, so `eslint .` never meets a generated bundle while the bench runs.
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-bench-'));
  teardown.add('the workflow bundle', async () => fs.rmSync(bundleDir, { recursive: true, force: true }));
  const bundlePath = path.join(bundleDir, 'workflow-bundle.js');
  progress('bundling workflows');
  await writeWorkflowBundle(bundlePath);

  const operatorToken = `dpo_bench_${crypto.randomBytes(12).toString('hex')}`;
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'dipper',
    DIPPER_DATA_DIR: dataDir,
    DIPPER_SKILLS_DIR: path.join(projectRoot, 'test', 'fixtures', 'skills'),
    DIPPER_PORT: String(gatewayPort),
    DIPPER_OPERATOR_TOKEN: operatorToken,
    DIPPER_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
    DIPPER_WORKFLOW_BUNDLE: bundlePath,
    DIPPER_BENCH_SURFACE: '1',
    // The bench measures calls, not quotas: its large runs build 1,000 agents as fast as they can.
    DIPPER_MAX_AGENTS_PER_RUN: '100000',
    DIPPER_MAX_CONCURRENT_SPAWNS: '100000',
    DIPPER_SPAWNS_PER_SECOND: '100000',
    DIPPER_SPAWN_BURST: '100000',
    // One bench token makes hundreds of calls a second, far past an agent's rate limit; the limiter stays in
    // the measured path with a rate the bench never reaches.
    DIPPER_RATE_PER_SECOND: '1000000',
    DIPPER_RATE_BURST: '1000000',
    DIPPER_LOG_LEVEL: 'warn',
    DIPPER_TASK_SERVICE_PORT: String(await freePort(gatewayPort + 2)),
    DIPPER_TASK_ADMIN_KEY: `dtk_bench_${crypto.randomBytes(12).toString('hex')}`,
  };
  const config = loadConfig(env, projectRoot);

  progress('starting the worker and the gateway');
  const workerLog = path.join(dataRoot, 'worker.log');
  const gatewayLog = path.join(dataRoot, 'gateway.log');
  const taskLog = path.join(dataRoot, 'taskservice.log');
  const taskService = startProcess('taskservice', { ...env, DIPPER_TASK_SERVICE_DB: path.join(dataDir, 'tasks.db') }, taskLog);
  teardown.add('the Task service', () => taskService.kill());
  const via = (await options.temporalFor?.(server.address)) ?? {};
  const worker = startProcess('worker', { ...env, TEMPORAL_ADDRESS: via.worker ?? server.address }, workerLog);
  teardown.add('the worker', () => worker.kill());
  const gateway = startProcess('gateway', { ...env, TEMPORAL_ADDRESS: via.gateway ?? server.address }, gatewayLog);
  teardown.add('the gateway', () => gateway.kill());
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  await readyUnlessExited(waitForHttp(`${gatewayUrl}/healthz`, 60_000), gateway, 'gateway', gatewayLog);
  await readyUnlessExited(untilPolling(config), worker, 'worker', workerLog);
  await readyUnlessExited(waitForHttp(`http://127.0.0.1:${config.taskApi.servicePort}/healthz`, 60_000), taskService, 'Task service', taskLog);

  return {
    config,
    gatewayUrl,
    operatorToken,
    pids: { worker: worker.proc.pid, gateway: gateway.proc.pid, temporal: server.pid },
    // The dev server's metrics port is its UI port plus two (src/devstack/devConfig.ts).
    temporalMetricsUrl: `http://127.0.0.1:${temporalPort + 1002}/metrics`,
    dataDir,
  };
}

/** The gateway answers before the worker polls; runs started earlier would wait on it. */
async function untilPolling(config: DipperConfig): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await workerIsPolling(config))) {
    if (Date.now() > deadline) throw new Error('the worker did not poll its task queue within 60 s');
    await new Promise((r) => setTimeout(r, 250));
  }
}
