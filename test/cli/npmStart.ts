import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import type { StackRecord } from '../../src/cli/stackRecord';
import { isRunning } from '../../src/devstack/processes';
import { projectRoot } from '../support/processes';

const run = promisify(execFile);

/** The test's environment without any Dipper or Temporal setting inherited from the shell or jest. */
export function cleanEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([key]) => !/^(DIPPER_|TEMPORAL_)/.test(key));
  return { ...Object.fromEntries(inherited), ...settings };
}

/**
 * `npm start` as a user runs it, in a process group of its own as a
 * terminal would give it, so a test can send the group a Ctrl-C.
 */
export class NpmStart {
  readonly proc: ChildProcess;
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.proc = spawn('npm', ['start', '--', ...args], { cwd: projectRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => (this.output += chunk.toString());
    this.proc.stdout!.on('data', collect);
    this.proc.stderr!.on('data', collect);
    // 'close', not 'exit': all the output is in by then.
    this.exited = new Promise((resolve) => this.proc.once('close', (code, signal) => resolve({ code, signal })));
  }

  /** Resolves once the output holds the text; fails if the process exits first or the time runs out. */
  async waitFor(text: string, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.output.includes(text)) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
        throw new Error(`npm start exited before printing "${text}":\n${this.output}`);
      }
      if (Date.now() > deadline) throw new Error(`no "${text}" after ${timeoutMs / 1000}s:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  signalGroup(signal: NodeJS.Signals): void {
    process.kill(-this.proc.pid!, signal);
  }
}

/** `npm run -s dipper -- <args>` with the given environment; never throws on a non-zero exit. */
export async function dipper(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'dipper', '--', ...args], { cwd: projectRoot, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

export function readRecord(file: string): StackRecord {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as StackRecord;
}

/** Polls until the condition holds; never a fixed sleep. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function waitForExit(pid: number, timeoutMs = 20_000): Promise<void> {
  return until(`pid ${pid} exits`, () => !isRunning(pid), timeoutMs);
}
