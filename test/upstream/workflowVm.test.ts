import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readTestEnv } from '../setup/env';
import { upstreamChanged } from './harness';
import { recordedHistory } from '../support/temporal';

/**
 * Upstream behaviour: in its workflow threads the SDK calls into the
 * workflow VM with Node's `timeout` option, several calls an activation,
 * and Node starts and joins a watchdog thread for each (250-420 µs a call
 * on a busy 2-core machine, 3 µs without); and it installs a promise hook
 * that captures a stack trace for every promise a workflow makes.
 *
 * Workaround it justifies: speedUpWorkflowThreads() in
 * src/worker/workflowThreads.ts (DIPPER_FAST_ACTIVATIONS), which loads
 * workflowThreadPreload.cjs into those threads. Each side runs in a fresh
 * process, since the thread patch and the hook are process-wide.
 */
const run = promisify(execFile);
const history = recordedHistory('_question_q_sys_');

interface Seen {
  timedCalls: number;
  calls: number;
  stackHooks: number;
  ok: boolean;
}

async function replayWith(mode: 'sdk' | 'dipper'): Promise<Seen> {
  const probe = path.join(__dirname, 'workflowVmProbe.ts');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', probe, readTestEnv().bundlePath, history, mode], { timeout: 60_000 });
  return JSON.parse(stdout) as Seen;
}

it("the SDK's workflow thread calls the VM with a timeout and hooks every promise; Dipper's preload takes both away and the replay still passes", async () => {
  const [sdk, dipper] = await Promise.all([replayWith('sdk'), replayWith('dipper')]);
  expect(sdk.ok).toBe(true);
  expect(sdk.calls).toBeGreaterThan(0);
  if (sdk.timedCalls === 0) throw upstreamChanged('workflow VM calls carry a timeout (a watchdog thread each)', 'workflowThreadPreload.cjs, its runInContext wrapper');
  if (sdk.stackHooks === 0) throw upstreamChanged('a promise hook captures a stack trace per workflow promise', 'workflowThreadPreload.cjs, its createHook wrapper');
  expect(dipper).toEqual({ ok: true, calls: expect.any(Number), timedCalls: 0, stackHooks: 0 });
  expect(dipper.calls).toBeGreaterThan(0);
}, 90_000);
