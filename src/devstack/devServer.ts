import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TemporalAdmin } from '../temporal';
import { devServerArgs, loadTemporalDevConfig } from './devConfig';
import { ensureNamespace, namespaceState } from './namespace';
import { isListening, stopProcess } from './processes';
import { ensureTemporalCli } from './temporalCli';
import { spawnTied } from './tiedSpawn';

export { loadTemporalDevConfig } from './devConfig';
export { ensureNamespace } from './namespace';

export interface DevServerOptions {
  projectRoot: string;
  port: number;
  uiPort: number;
  /** SQLite file to persist in; in memory when absent. */
  dbFile?: string;
  headless?: boolean;
  /** The server's output is appended here as well as kept for error messages. */
  logFile?: string;
  /** Overrides dev-server.json's namespace. */
  namespace?: string;
  readyTimeoutMs?: number;
  /** Use a Temporal server already listening on the port (the default); false refuses to. */
  reuse?: boolean;
  /** Dynamic config beside dev-server.json's (a test's faster drainage checks). */
  dynamicConfig?: Record<string, unknown>;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  /** Undefined when an already running server was reused. */
  pid: number | undefined;
  reused: boolean;
  /** Resolves, saying how, when the server process exits; never for a reused server. */
  exited: Promise<string>;
  /** SIGTERM, then SIGKILL if it has not exited after a few seconds. A no-op for a reused server. */
  stop(): Promise<void>;
}

const tailLines = 40;
const killAfterMs = 5000;

/**
 * Starts `temporal server start-dev` with Dipper's namespace, or reuses one
 * already on the port unless told not to. The server dies with this process.
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const devConfig = loadTemporalDevConfig(opts.projectRoot);
  const namespace = opts.namespace ?? devConfig.namespace;
  const address = `127.0.0.1:${opts.port}`;
  const uiUrl = opts.headless ? undefined : `http://127.0.0.1:${opts.uiPort}`;

  if (await isListening(opts.port)) {
    if (opts.reuse === false) throw new Error(`Port ${opts.port} is in use, so the Temporal dev server cannot start there`);
    await reuse(address, namespace, devConfig.searchAttributes);
    process.stderr.write(`dipper: reusing the Temporal server already on ${address} (namespace ${namespace})\n`);
    return { address, uiUrl, pid: undefined, reused: true, exited: new Promise(() => undefined), stop: async () => {} };
  }

  const bin = await ensureTemporalCli(opts.projectRoot);
  if (opts.dbFile) fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  const dynamicConfig = { ...devConfig.dynamicConfig, ...opts.dynamicConfig };
  const child = spawnTied(bin, devServerArgs({ ...opts, namespace }, { ...devConfig, dynamicConfig }), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: serverEnv(),
  });
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const gone = () => {
    if (spawnError) return `could not start (${spawnError.message})`;
    if (child.exitCode !== null || child.signalCode !== null) return `exited (${child.exitCode ?? child.signalCode}) before it was ready`;
    return undefined;
  };
  const log = captureOutput(child, opts.logFile);
  const stop = () => stopProcess(child, killAfterMs);
  // An orphaned dev server would hold the port and the SQLite file after we are gone.
  const onExit = () => child.kill('SIGTERM');
  process.once('exit', onExit);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', onExit);
      resolve(signal ? `signal ${signal}` : `code ${code}`);
    }),
  );

  try {
    await waitUntilReady(gone, address, namespace, Object.keys(devConfig.searchAttributes), opts.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await stop();
    process.removeListener('exit', onExit);
    throw new Error(`${(err as Error).message}\n--- last lines of the Temporal dev server log ---\n${log.tail()}`);
  }
  return {
    address,
    uiUrl,
    pid: child.pid,
    reused: false,
    exited,
    stop: async () => {
      process.removeListener('exit', onExit);
      await stop();
    },
  };
}

async function reuse(address: string, namespace: string, searchAttributes: Record<string, string>): Promise<void> {
  let state;
  try {
    state = await TemporalAdmin.with(address, '3s', (admin) => namespaceState(admin, namespace, Object.keys(searchAttributes)));
  } catch (err) {
    throw new Error(`Port ${address} is in use by something that is not a Temporal server (${(err as Error).message}). ` +
      'Stop it, or set DIPPER_TEMPORAL_DEV_PORT to another port.');
  }
  if (state === 'missing-namespace') {
    throw new Error(`The Temporal server on ${address} has no namespace ${namespace}. ` +
      'Stop it, set DIPPER_TEMPORAL_DEV_PORT to another port, or set TEMPORAL_ADDRESS to use it as an external server.');
  }
  if (state === 'missing-search-attributes') await ensureNamespace(address, namespace, searchAttributes);
}

/** Polls until the namespace is served; `gone` says why the server process is no more, if it is not. */
async function waitUntilReady(gone: () => string | undefined, address: string, namespace: string, names: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    const reason = gone();
    if (reason) throw new Error(`The Temporal dev server for ${address} ${reason}`);
    try {
      const state = await TemporalAdmin.with(address, '2s', (admin) => namespaceState(admin, namespace, names));
      if (state === 'ready') return;
      lastError = state;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`The Temporal dev server was not ready on ${address} after ${timeoutMs / 1000}s (${lastError})`);
}

/** The server must not pick up a TEMPORAL_ADDRESS or TEMPORAL_NAMESPACE meant for clients. */
function serverEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TEMPORAL_')));
}

function captureOutput(child: ChildProcess, logFile?: string): { tail(): string } {
  const lines: string[] = [];
  const file = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : undefined;
  const onData = (chunk: Buffer) => {
    file?.write(chunk);
    lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.trim() !== ''));
    if (lines.length > tailLines) lines.splice(0, lines.length - tailLines);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.once('close', () => file?.end());
  return { tail: () => lines.join('\n') || '(no output)' };
}
