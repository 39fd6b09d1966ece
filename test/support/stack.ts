import path from 'node:path';
import { readTestEnv, testDataRoot } from '../setup/env';
import { Operator } from './clients';
import { projectRoot, startProcess, waitForHttp, type DipperProcess } from './processes';

export const referenceRuntime = { kind: 'command', command: [process.execPath, path.join(projectRoot, 'bin', 'reference-runtime.js')] };

export interface Stack {
  gatewayUrl: string;
  operator: Operator;
  env: Record<string, string>;
  worker: DipperProcess;
  gateways: DipperProcess[];
  /** Starts another gateway replica on the given port, sharing everything else but `extra`. */
  addGateway(port: number, extra?: Record<string, string>): Promise<string>;
  /** Kills the worker (SIGKILL by default, as a crash) and starts a fresh one. */
  /** Stops the worker, awaits `meanwhile` (what happens while no worker runs), then starts a new one. */
  restartWorker(signal?: NodeJS.Signals, meanwhile?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A worker and gateway of their own, on their own task queue, beside the
 * shared test stack (same Temporal server): for tests that kill processes or
 * need another runtime configuration.
 */
export async function startStack(name: string, port: number, extra: Record<string, string> = {}): Promise<Stack> {
  const base = readTestEnv();
  const gatewayPort = shifted(port, base.gatewayUrl);
  const env: Record<string, string> = { ...base.processEnv, DIPPER_TASK_QUEUE: `dipper-${name}`, DIPPER_PORT: String(gatewayPort), ...extra };
  // Another data folder is another audit chain: it gets a witness of its own.
  if (extra.DIPPER_DATA_DIR && !extra.DIPPER_AUDIT_WITNESS) env.DIPPER_AUDIT_WITNESS = `${extra.DIPPER_DATA_DIR}-audit-witness.json`;
  const log = (what: string) => path.join(testDataRoot, `${name}-${what}.log`);
  let worker = startProcess('worker', env, log('worker'));
  const gateways = [startProcess('gateway', env, log('gateway'))];
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitForHttp(`${gatewayUrl}/healthz`);
  const stack: Stack = {
    gatewayUrl,
    operator: new Operator({ gatewayUrl, operatorToken: base.operatorToken }),
    env,
    get worker() {
      return worker;
    },
    gateways,
    async addGateway(replicaPort, more = {}) {
      const port = shifted(replicaPort, base.gatewayUrl);
      gateways.push(startProcess('gateway', { ...env, ...more, DIPPER_PORT: String(port) }, log(`gateway-${port}`)));
      const url = `http://127.0.0.1:${port}`;
      await waitForHttp(`${url}/healthz`);
      return url;
    },
    async restartWorker(signal = 'SIGKILL', meanwhile) {
      await worker.kill(signal);
      await meanwhile?.();
      worker = startProcess('worker', env, log('worker'));
    },
    async stop() {
      await Promise.all([worker.kill(), ...gateways.map((g) => g.kill())]);
    },
  };
  return stack;
}

/**
 * A stack's port moved by as much as the run's own gateway port was moved
 * (DIPPER_TEST_GATEWAY_PORT): two jest runs on one machine, each with its
 * own ports, then start their stacks apart instead of on each other's.
 */
/** The port a stack started on `port` listens on: test runs beside another (DIPPER_TEST_GATEWAY_PORT) shift every port alike. */
export function stackPort(port: number): number {
  return shifted(port, readTestEnv().gatewayUrl);
}

function shifted(port: number, runGatewayUrl: string): number {
  return port + (Number(new URL(runGatewayUrl).port) - DEFAULT_GATEWAY_PORT);
}

const DEFAULT_GATEWAY_PORT = 28710;
