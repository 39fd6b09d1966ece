import type { Started } from './globalSetup';
import { logDigest } from './logDigest';
import { replayEverything } from './replayEverything';
import { strayRejections } from './strayRejections';

/**
 * Replays every history the run made, then stops the stack whatever the
 * outcome. A history that no longer replays fails the run: throwing here
 * makes jest exit non-zero after the tests themselves passed.
 */
export default async function globalTeardown(): Promise<void> {
  let problems: string[];
  const stack = (globalThis as { __dipperStack?: Started }).__dipperStack;
  try {
    problems = await replayEverything(await stack?.replayAlong.stop());
  } finally {
    await stack?.stop();
    const digest = process.env.DIPPER_TEST_DATA ? logDigest(process.env.DIPPER_TEST_DATA) : '';
    if (digest) process.stdout.write(`the shared stack warned:\n${digest}\n`);
  }
  if (problems.length > 0) {
    throw new Error(`${problems.length} workflow histories do not replay with this code:\n${problems.join('\n')}`);
  }
  const stray = strayRejections();
  if (stray.length > 0) throw new Error(`${stray.length} promises tests left behind rejected unhandled:\n${stray.join('\n')}`);
  failIfStillRunning(60_000);
}

/**
 * Jest waits for ever for a process that something keeps alive (a worker
 * thread a failed replay left running kept a CI run waiting until its time
 * ran out). Past `ms` after the end, the run fails naming what is still
 * open; a process that exits on its own never gets there.
 */
function failIfStillRunning(ms: number): void {
  setTimeout(() => {
    const open = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles().map((h) => h.constructor.name);
    process.stderr.write(`The test process was still running ${ms / 1000} s after the run ended, held by: ${open.join(', ') || 'nothing jest can name'}\n`);
    process.exit(1);
  }, ms).unref();
}
