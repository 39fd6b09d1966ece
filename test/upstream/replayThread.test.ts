import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readTestEnv } from '../setup/env';
import { upstreamChanged } from './harness';
import { recordedHistory } from '../support/temporal';

/**
 * Upstream behaviour: `Worker.runReplayHistory` and `runReplayHistories`
 * run the workflow code on the calling thread unless told otherwise (their
 * default debug mode), and install there, never to remove it, the promise
 * hook that tracks workflow stack traces. From then on every promise the
 * process creates, workflow or not, compiles a small function to find its
 * realm's activator. `debugMode` is typed out of ReplayWorkerOptions but
 * still read, so `debugMode: false` moves the replay to a worker thread.
 *
 * Workaround it justifies: replayOptions() in src/ops/replayAll.ts, used
 * by every replay Dipper makes (replayAll, `dipper doctor`, the tests). Each side runs in a fresh process, since the hook outlives
 * the replay.
 */
const run = promisify(execFile);
// A short one: a question Dipper asks the person.
const history = recordedHistory('_question_q_sys_');

async function lookupsAfterReplay(mode: 'sdk-default' | 'dipper'): Promise<number> {
  const probe = path.join(__dirname, 'replayThreadProbe.ts');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', probe, readTestEnv().bundlePath, history, mode], { timeout: 60_000 });
  return (JSON.parse(stdout) as { lookups: number }).lookups;
}

it('a replay with default options leaves every later promise of its thread going through the SDK hook; one with replayOptions does not', async () => {
  const [byDefault, dipper] = await Promise.all([lookupsAfterReplay('sdk-default'), lookupsAfterReplay('dipper')]);
  if (byDefault === 0) {
    throw upstreamChanged('a default replay leaves a promise hook on the calling thread', "replayOptions()' debugMode: false");
  }
  expect(byDefault).toBeGreaterThanOrEqual(100);
  expect(dipper).toBe(0);
}, 90_000);
