import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { nodeArgs } from './entryBuild';
import { isListening } from './processes';

/** The checkout this code runs from: the worker and gateway entry points are found beside it. */
export const projectRoot = path.resolve(__dirname, '..', '..');

export interface DipperProcess {
  proc: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the worker, gateway, Task service or iSphere bridge simulator entry point as its own process, as in
 * production; tests, the bench and the soak run their stacks this way.
 */
export function startProcess(which: 'worker' | 'gateway' | 'taskservice' | 'isphere/bridgeSim', env: Record<string, string>, logFile: string): DipperProcess {
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, nodeArgs(which, projectRoot), {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    exited,
    kill: async (signal = 'SIGTERM') => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The first port from `from` on where it (and port + offset, when given) is free. */
export async function freePort(from: number, offset?: number): Promise<number> {
  for (let port = from; port < from + 100; port++) {
    if (await isListening(port)) continue;
    if (offset !== undefined && (await isListening(port + offset))) continue;
    return port;
  }
  throw new Error(`no free port in ${from}..${from + 99}`);
}
