import fs from 'node:fs';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { replayOptions } from '../../src/ops/replayAll';

/**
 * Run as its own process by idleRuntime.test.ts, since the replay it breaks
 * leaves its workflow threads running for good (the SDK never stops the
 * threads of a replay worker it failed to make): starts a replay while one
 * connection is the Runtime's only native object, closes the connection,
 * and prints `{"shutDown": bool, "outcome": "replayed" | error}`, then exits.
 */
async function main(): Promise<void> {
  const [address, bundlePath, historyFile] = process.argv.slice(2);
  installQuietRuntime();
  const hold = await NativeConnection.connect({ address });
  const runtime = Runtime.instance();
  // The replay takes the Runtime before its first await; the connection then closes while it loads the bundle.
  const replayed = Worker.runReplayHistory(replayOptions({ codePath: bundlePath }, 'idle-runtime'), JSON.parse(fs.readFileSync(historyFile, 'utf8'))).then(
    () => 'replayed',
    (err: unknown) => String(err),
  );
  await hold.close();
  const shutDown = (runtime as unknown as { native?: unknown }).native === undefined;
  process.stdout.write(JSON.stringify({ shutDown, outcome: await replayed }));
  process.exit(0);
}

void main();
