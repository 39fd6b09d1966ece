import { isStartedMessage } from '../common/ready';
import { type BuiltEntry, nodeArgs } from './entryBuild';
import { stopProcess } from './processes';
import { spawnTied } from './tiedSpawn';
import { projectRoot } from '../common/projectRoot';

/** One run of a supervised process. */
export interface Running {
  pid: number | undefined;
  /** Resolves, saying how, when the process exits. */
  exited: Promise<string>;
  /** Resolves once the process says its start-up is over (src/common/ready.ts), or exits. */
  started?: Promise<void>;
  stop(): Promise<void>;
}

export interface Supervised {
  /** Stops the process for good: no restart after this. */
  stop(): Promise<void>;
}

export interface Backoff {
  firstMs: number;
  maxMs: number;
  /**
   * A process that ran this long before exiting had started fine: it was
   * killed, or died of something a restart cures, so it comes back after
   * the first pause again. Only one that keeps dying sooner (a crash loop:
   * a bad setting, a server not there) waits longer each time. At 60 s, a
   * worker killed every 15-30 s waited up to 30 s a restart (issue 20).
   */
  healthyRunMs: number;
}

const defaultBackoff: Backoff = { firstMs: 1000, maxMs: 30_000, healthyRunMs: 10_000 };
const killAfterMs = 10_000;

/**
 * Starts a process, then starts it again after a growing pause whenever it
 * exits unasked. The first start's failure is thrown to the caller; a failed
 * restart is one more exit. onStart hears every new pid.
 */
export async function supervise(
  name: string,
  start: () => Promise<Running>,
  onStart: (pid: number | undefined) => void,
  backoff: Backoff = defaultBackoff,
): Promise<Supervised> {
  let current = await start();
  onStart(current.pid);
  let stopping = false;
  let restarting: Promise<void> | undefined;
  let endPause: (() => void) | undefined;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      endPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  /** Pauses, then starts until a start succeeds or stop() is called; returns the next pause. */
  const restart = async (backoffMs: number): Promise<number> => {
    for (;;) {
      await pause(backoffMs);
      backoffMs = Math.min(backoffMs * 2, backoff.maxMs);
      if (stopping) return backoffMs;
      let next: Running;
      try {
        next = await start();
      } catch (err) {
        const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
        process.stderr.write(`dipper: ${name} did not start (${reason}); trying again in ${backoffMs / 1000}s\n`);
        continue;
      }
      current = next;
      onStart(next.pid);
      return backoffMs;
    }
  };

  void (async () => {
    let backoffMs = backoff.firstMs;
    for (;;) {
      const startedAt = Date.now();
      const how = await current.exited;
      if (stopping) return;
      if (Date.now() - startedAt >= backoff.healthyRunMs) backoffMs = backoff.firstMs;
      process.stderr.write(`dipper: ${name} exited (${how}); restarting in ${backoffMs / 1000}s\n`);
      const next = restart(backoffMs);
      restarting = next.then(() => undefined);
      backoffMs = await next;
      if (stopping) return;
    }
  })();

  return {
    async stop() {
      stopping = true;
      endPause?.();
      // A restart under way finishes first, so what it started is stopped below.
      await restarting;
      await current.stop();
    },
  };
}

/** A process's entry (src/<which>/main.ts, built: entryBuild.ts) from the project root, tied to this process (see spawnTied). */
export function startNode(which: BuiltEntry, env: NodeJS.ProcessEnv): Promise<Running> {
  const child = spawnTied(process.execPath, nodeArgs(which, projectRoot), {
    cwd: projectRoot,
    env,
    // The channel carries one word, that the start-up is over; the child closes it then.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Where setpriv is missing, at least a normal exit of ours takes the child along.
  const onExit = () => child.kill('SIGTERM');
  process.once('exit', onExit);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => resolve(`could not start: ${err.message}`));
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
  }).finally(() => process.removeListener('exit', onExit));
  const started = new Promise<void>((resolve) => {
    child.on('message', (m) => isStartedMessage(m) && resolve());
    void exited.then(() => resolve());
  });
  // A child that never started has no exit to wait for.
  const stop = () => (child.pid === undefined ? Promise.resolve() : stopProcess(child, killAfterMs));
  return Promise.resolve({ pid: child.pid, exited, started, stop });
}
