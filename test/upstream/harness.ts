import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv, testDataRoot } from '../setup/env';
import { skipReplayOf } from '../support/replaySkip';

/**
 * What every reproduction of test/upstream shares: a client on the test
 * server, the probe workflows' bundle (built once a jest run, beside the
 * run's data), a worker of the pinned SDK on a task queue of the test's
 * own, and replay. The probes are not Dipper's workflows: each is left out
 * of the run's final replay, and several are broken on purpose.
 */
export interface Upstream {
  client: Client;
  connection: Connection;
  namespace: string;
  /** The probes alone: what the pinned SDK does with no workaround of Dipper's. */
  bundlePath: string;
  close(): Promise<void>;
}

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

export async function connectUpstream(): Promise<Upstream> {
  // The probes fail workflow tasks on purpose; the SDK would print each one.
  installQuietRuntime();
  const env = readTestEnv();
  const connection = await Connection.connect({ address: env.temporalAddress });
  const client = new Client({ connection, namespace: env.namespace });
  return { client, connection, namespace: env.namespace, bundlePath: await probeBundle(), close: () => connection.close() };
}

async function probeBundle(): Promise<string> {
  const file = path.join(testDataRoot, 'upstream-probes.js');
  if (!fs.existsSync(file)) {
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./probe'), logger: quiet });
    fs.writeFileSync(file, code);
  }
  return file;
}

/**
 * The same probes bundled with Dipper's own workflow interceptors
 * (workflows/interceptors.ts: FIRST_TASK_MARK and the Query guards), as the
 * worker bundles Dipper's workflows: a reproduction run on it fails when
 * one of those workarounds is taken out. Built once a jest run, on demand.
 */
export async function guardedProbeBundle(): Promise<string> {
  const file = path.join(testDataRoot, 'upstream-probes-guarded.js');
  if (!fs.existsSync(file)) {
    const interceptors = path.join(__dirname, '..', '..', 'workflows', 'interceptors.ts');
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./probe'), workflowInterceptorModules: [interceptors], logger: quiet });
    fs.writeFileSync(file, code);
  }
  return file;
}

/** Runs `fn` while a worker of the pinned SDK serves the probes on the test's own task queue (`options.workflowBundle` picks another bundle). */
export async function withProbeWorker<T>(up: Upstream, taskQueue: string, options: Partial<WorkerOptions>, fn: () => Promise<T>): Promise<T> {
  const connection = await NativeConnection.connect({ address: readTestEnv().temporalAddress });
  try {
    const worker = await Worker.create({ connection, namespace: up.namespace, taskQueue, workflowBundle: { codePath: up.bundlePath }, ...options });
    return await worker.runUntil(fn);
  } finally {
    await connection.close();
  }
}

/** A task queue and workflow id for one probe; the run's final replay leaves it out. */
export function probeId(name: string): string {
  const id = `upstream/${name}/${process.pid}-${Date.now()}`;
  skipReplayOf({ workflowId: id, reason: `test/upstream probe (${name}), not Dipper's code` });
  return id;
}

export type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** Replays a history with the probe bundle (or the one named): undefined when it replays, else the replayer's message. */
export async function replayFailure(up: Upstream, history: History, bundlePath = up.bundlePath): Promise<string | undefined> {
  return Worker.runReplayHistory(replayOptions({ codePath: bundlePath }, 'upstream'), history).then(
    () => undefined,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
}

export type HistoryEvent = NonNullable<History['events']>[number];

/** An event's kind, named by its attributes: `workflowTaskCompleted`, `timerStarted`, `workflowExecutionUpdateAccepted`. */
export function kindOf(event: HistoryEvent): string {
  const key = Object.keys(event).find((k) => k.endsWith('EventAttributes') && event[k as keyof HistoryEvent] != null);
  return key ? key.slice(0, -'EventAttributes'.length) : 'unknown';
}

/** The kinds of a history's events, in order. */
export function kinds(history: History): string[] {
  return (history.events ?? []).map(kindOf);
}

/**
 * The line a reproduction fails with once the pinned SDK no longer behaves
 * as the workaround assumes: which workaround can go, and where it is explained.
 */
export function upstreamChanged(behaviour: string, workaround: string): Error {
  return new Error(`The SDK no longer shows this behaviour: ${behaviour}. ${workaround} can now go (docs/decisions.md, "Workarounds of the SDK and their reproductions").`);
}
