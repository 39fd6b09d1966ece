import { spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../common/projectRoot';

/** Runs a command in the project root with the terminal attached; resolves with its exit code. */
export function runStep(command: string, args: string[]): Promise<number> {
  process.stderr.write(`\ndipper: ${[path.basename(command), ...args].map(quoted).join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, stdio: 'inherit' });
    child.once('error', reject);
    // Killed by a signal counts as a failure, like a shell's 128+n.
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs the steps in order and returns the first non-zero exit code, or 0. */
export async function runSteps(steps: [string, string[]][]): Promise<number> {
  for (const [command, args] of steps) {
    const code = await runStep(command, args);
    if (code !== 0) return code;
  }
  return 0;
}

/**
 * Runs the steps at the same time (checks that each keep one core busy),
 * printing each one's output whole once it ends, in the order given, so
 * their lines never interleave. Resolves with the first non-zero exit code
 * in that order, or 0.
 */
export async function runTogether(steps: [string, string[]][]): Promise<number> {
  const runs = steps.map(([command, args]) => {
    const line = `\ndipper: ${[path.basename(command), ...args].map(quoted).join(' ')}\n`;
    const output: Buffer[] = [];
    const done = new Promise<number>((resolve, reject) => {
      const child = spawn(command, args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
      child.once('error', reject);
      child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
    return { line, output, done };
  });
  let first = 0;
  for (const run of runs) {
    const code = await run.done;
    process.stderr.write(run.line);
    process.stdout.write(Buffer.concat(run.output));
    if (first === 0) first = code;
  }
  return first;
}

/** Shell-style display of one argument, so the printed line can be pasted back. */
function quoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
