import type { Started } from './globalSetup';
import { replayEverything } from './replayEverything';
import { strayRejections } from './strayRejections';

/**
 * Replays every history the run made, then stops the stack whatever the
 * outcome. A history that no longer replays fails the run: throwing here
 * makes jest exit non-zero after the tests themselves passed.
 */
export default async function globalTeardown(): Promise<void> {
  let problems: string[];
  try {
    problems = await replayEverything();
  } finally {
    await (globalThis as { __dipperStack?: Started }).__dipperStack?.stop();
  }
  if (problems.length > 0) {
    throw new Error(`${problems.length} workflow histories do not replay with this code:\n${problems.join('\n')}`);
  }
  const stray = strayRejections();
  if (stray.length > 0) throw new Error(`${stray.length} promises tests left behind rejected unhandled:\n${stray.join('\n')}`);
}
