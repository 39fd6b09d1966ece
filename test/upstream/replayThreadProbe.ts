import fs from 'node:fs';
import { Worker } from '@temporalio/worker';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { replayOptions } from '../../src/ops/replayAll';

/**
 * Run as its own process by replayThread.test.ts: replays one history with
 * the SDK's default replay options or with Dipper's, then counts how often
 * plain promises made on this thread afterwards reach the SDK's promise hook
 * (it looks each promise's realm up through `__TEMPORAL_ACTIVATOR__`).
 * Prints `{"lookups": n}`.
 */
async function main(): Promise<void> {
  const [bundlePath, historyFile, mode] = process.argv.slice(2);
  installQuietRuntime();
  let lookups = 0;
  Object.defineProperty(globalThis, '__TEMPORAL_ACTIVATOR__', { get: () => void lookups++, configurable: true });
  const history = JSON.parse(fs.readFileSync(historyFile, 'utf8'));
  const options = mode === 'dipper' ? replayOptions({ codePath: bundlePath }, 'probe') : { workflowBundle: { codePath: bundlePath } };
  await Worker.runReplayHistory(options, history);
  lookups = 0;
  for (let i = 0; i < 100; i++) await new Promise<void>((resolve) => resolve());
  process.stdout.write(JSON.stringify({ lookups }));
}

void main();
