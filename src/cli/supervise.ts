import { type ChildProcess, spawn } from 'node:child_process';
import { stopProcess } from '../devstack/processes';
import { projectRoot } from './projectRoot';

export interface Supervised {
  /** Stops the child for good: no restart after this. */
  stop(): Promise<void>;
}

const firstBackoffMs = 1000;
const maxBackoffMs = 30_000;
/** A child that ran this long before exiting was healthy; its next restart is quick again. */
const healthyRunMs = 60_000;
const killAfterMs = 10_000;

/** Runs `node <args>` in the project root and restarts it, with a growing delay, whenever it exits. */
export function supervise(name: string, args: string[], env: NodeJS.ProcessEnv): Supervised {
  let child: ChildProcess | undefined;
  let stopping = false;
  let backoffMs = firstBackoffMs;
  let timer: NodeJS.Timeout | undefined;
  // Children must not outlive `up`, even when it exits through an error.
  const onExit = () => child?.kill('SIGTERM');
  process.once('exit', onExit);

  const start = () => {
    const startedAt = Date.now();
    const current = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: 'inherit' });
    child = current;
    current.once('error', (err) => process.stderr.write(`dipper: could not start ${name}: ${err.message}\n`));
    current.once('exit', (code, signal) => {
      if (child === current) child = undefined;
      if (stopping) return;
      if (Date.now() - startedAt >= healthyRunMs) backoffMs = firstBackoffMs;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      process.stderr.write(`dipper: ${name} exited unexpectedly (${how}); restarting in ${backoffMs / 1000}s\n`);
      timer = setTimeout(start, backoffMs);
      backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    });
  };
  start();

  return {
    async stop() {
      stopping = true;
      clearTimeout(timer);
      process.removeListener('exit', onExit);
      if (child) await stopProcess(child, killAfterMs);
    },
  };
}
