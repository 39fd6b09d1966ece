import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { LaunchPayload } from '../../src/common/launchPayload';

export interface ExitReport {
  code: number | null;
  signal: string | null;
  stderr_tail: string[];
  /** Which process exited: two workers watching one process report it twice. */
  pid: number;
}

const STDERR_LINES = 200;

/** The host's agent processes are at their limit; the launch is refused rather than overload the host. */
export class TooManyProcesses extends Error {
  constructor(readonly limit: number) {
    super(`this host already runs ${limit} agent processes (DIPPER_MAX_RUNTIME_PROCESSES)`);
  }
}
const WATCH_INTERVAL_MS = 1000;

/** The fields of /proc/<pid>/stat after the command name, or null for no such process. */
function stat(pid: number): string[] | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Running: a zombie has ended (a process whose worker died waits for init to reap it, which some containers never do). */
function alive(pid: number): boolean {
  const state = stat(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Kernel start time of a process, so a recycled pid is never mistaken for our agent. */
function startTime(pid: number): string | null {
  return stat(pid)?.[19] ?? null;
}

function writePid(dir: string, pid: number): void {
  fs.writeFileSync(path.join(dir, 'runtime.pid'), `${pid} ${startTime(pid) ?? ''}`);
}

/** The process an agent's pid file names, live or not, or null without a (readable) file. */
function recordedPid(dir: string): { pid: number; live: boolean } | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'runtime.pid'), 'utf8');
  } catch {
    return null;
  }
  const [pidText, started] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return { pid: 0, live: false };
  return { pid, live: alive(pid) && (!started || startTime(pid) === started) };
}

/** The agent's live process from its pid file, or null. */
function readPid(dir: string): number | null {
  const recorded = recordedPid(dir);
  return recorded?.live ? recorded.pid : null;
}

function tail(file: string): string[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-STDERR_LINES);
  } catch {
    return [];
  }
}

/**
 * Runs agents as operator-configured command lines. The process is detached
 * so it outlives a worker restart; its pid file makes launching idempotent
 * (no second copy of the same agent), and whichever worker holds it reports
 * its exit. The launch payload, token included, goes on stdin only: never
 * on the command line, and never in a file another process could read
 * later. The environment is the one agentEnv builds, nothing inherited.
 */
export class CommandRuntime {
  private readonly watched = new Set<number>();

  constructor(
    private readonly onExit: (payload: Pick<LaunchPayload, 'run_id' | 'agent_id'>, exit: ExitReport) => void,
    /** Agent processes this worker runs at once (DIPPER_MAX_RUNTIME_PROCESSES); one worker per host makes it per host. */
    private readonly maxProcesses = Number.POSITIVE_INFINITY,
  ) {}

  /** Agent processes watched now. */
  running(): number {
    return this.watched.size;
  }

  launch(argv: string[], payload: LaunchPayload, dir: string, mode: LaunchPayload['mode'], env: Record<string, string>): { pid: number; adopted: boolean } {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const existing = readPid(dir);
    if (existing !== null && mode === 'first') {
      this.watch(existing, payload, dir);
      return { pid: existing, adopted: true };
    }
    if (this.watched.size >= this.maxProcesses) throw new TooManyProcesses(this.maxProcesses);
    // Launch payloads were once written here; none is left behind for another process to read.
    fs.rmSync(path.join(dir, 'launch.json'), { force: true });
    const stderrFile = path.join(dir, 'stderr.log');
    const err = fs.openSync(stderrFile, 'a', 0o600);
    const out = fs.openSync(path.join(dir, 'stdout.log'), 'a', 0o600);
    const child = spawn(argv[0], argv.slice(1), { cwd: payload.workspace_path, detached: true, stdio: ['pipe', out, err], env });
    fs.closeSync(err);
    fs.closeSync(out);
    if (child.pid === undefined) {
      // spawn reports a missing or unrunnable command later, as an 'error' event; answer now instead.
      child.on('error', () => undefined);
      throw new Error(`the runtime command could not be started: ${argv[0]}`);
    }
    child.on('error', () => undefined);
    child.stdin?.end(JSON.stringify(payload));
    child.stdin?.on('error', () => undefined);
    const pid = child.pid;
    writePid(dir, pid);
    this.watched.add(pid);
    child.on('exit', (code, signal) => {
      this.watched.delete(pid);
      fs.rmSync(path.join(dir, 'runtime.pid'), { force: true });
      this.onExit(payload, { code, signal, stderr_tail: tail(stderrFile), pid });
    });
    child.unref();
    return { pid, adopted: false };
  }

  /**
   * At worker start: every agent process still running under the data folder
   * (started by an earlier worker) is watched, so its exit still reaches its
   * workflow. A pid file whose process is gone names one that ended while no
   * worker watched it (Dipper's own stops remove the file first): its exit is
   * reported now, or its agent would wait forever on a process that is not
   * there. Returns how many were adopted.
   */
  adoptAll(runsDir: string): number {
    let adopted = 0;
    for (const runId of list(runsDir)) {
      const agentsDir = path.join(runsDir, runId, 'agents');
      for (const agentId of list(agentsDir)) {
        const dir = path.join(agentsDir, agentId);
        const recorded = recordedPid(dir);
        if (recorded === null) continue;
        const who = { run_id: runId, agent_id: agentId };
        if (!recorded.live) {
          fs.rmSync(path.join(dir, 'runtime.pid'), { force: true });
          this.onExit(who, { code: null, signal: null, stderr_tail: tail(path.join(dir, 'stderr.log')), pid: recorded.pid });
          continue;
        }
        this.watch(recorded.pid, who, dir);
        adopted++;
      }
    }
    return adopted;
  }

  /** A process started by an earlier worker: poll it, since it is not our child. */
  private watch(pid: number, payload: Pick<LaunchPayload, 'run_id' | 'agent_id'>, dir: string): void {
    if (this.watched.has(pid)) return;
    this.watched.add(pid);
    const timer = setInterval(() => {
      if (alive(pid)) return;
      clearInterval(timer);
      this.watched.delete(pid);
      fs.rmSync(path.join(dir, 'runtime.pid'), { force: true });
      this.onExit(payload, { code: null, signal: null, stderr_tail: tail(path.join(dir, 'stderr.log')), pid });
    }, WATCH_INTERVAL_MS);
    timer.unref();
  }

  /** Stops the agent's process group; a missing process is already stopped. */
  async stop(dir: string): Promise<void> {
    const pid = readPid(dir);
    // Stopped by Dipper: no worker reports its end as a crash later, dead already or not.
    fs.rmSync(path.join(dir, 'runtime.pid'), { force: true });
    if (pid === null) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return;
    }
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // exited after SIGTERM
    }
  }
}

function list(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
