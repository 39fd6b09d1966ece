import { type ChildProcess, execFileSync, spawn, type SpawnOptions } from 'node:child_process';

let wrapper: string[] | null | undefined;

/**
 * util-linux's setpriv sets PR_SET_PDEATHSIG and then execs the command, so
 * the kernel kills the command when the process that spawned it dies, even by
 * SIGKILL, with no code in the command itself (the Temporal binary is not
 * ours to change). Probed once by running it, since an old setpriv lacks the
 * flag. SIGKILL rather than SIGTERM: the death of the parent is a crash, and a
 * child that hung in a graceful stop would outlive it.
 */
function parentDeathWrapper(): string[] | null {
  if (wrapper !== undefined) return wrapper;
  const argv = ['setpriv', '--pdeathsig', 'KILL', '--'];
  try {
    execFileSync(argv[0], [...argv.slice(1), 'true'], { stdio: 'ignore' });
    wrapper = argv;
  } catch {
    wrapper = null;
    process.stderr.write('dipper: setpriv (util-linux) with --pdeathsig not found; a killed `npm start` would leave its children running\n');
  }
  return wrapper;
}

/**
 * Spawns a child tied to this process: it dies when this process dies, even
 * by SIGKILL. It runs in its own process group, so a Ctrl-C in the terminal
 * reaches only this process, which then stops its children in order. What the
 * child itself starts detached (agent runtimes) is not tied: the kernel clears
 * the parent-death signal in every new child.
 *
 * The parent-death signal follows the thread that spawned, so call this from
 * the main thread only (Node's child_process always spawns from it).
 */
export function spawnTied(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const prefix = parentDeathWrapper();
  const argv = prefix ? [...prefix, command, ...args] : [command, ...args];
  return spawn(argv[0], argv.slice(1), { ...options, detached: true });
}
