import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readTestEnv } from '../setup/env';
import { upstreamChanged } from './harness';
import { recordedHistory } from '../support/temporal';

/**
 * Upstream behaviour: the SDK's Runtime shuts its native core down as soon
 * as its last native object (connection, worker, replay worker) is closed,
 * and the next use makes a new one. A replay worker takes the Runtime when
 * it starts being made, then loads the bundle and starts its workflow
 * threads before it asks that Runtime for its native worker: if the last
 * other native object closes in between, it asks a runtime that is gone and
 * fails with "failed to downcast any to … Runtime", leaving its workflow
 * threads running (a process that met it does not exit on its own). Two
 * replays side by side hit it as soon as one ends while the other starts.
 *
 * Workaround it justifies: replayAll's replayers all stay open until every
 * one has run out of histories (`thenWait`, src/ops/replayAll.ts), and
 * test/durability/doctor.test.ts holds a connection while its crash tests
 * replay side by side.
 */
const run = promisify(execFile);
// A short one: a question Dipper asks the person.
const history = recordedHistory('_question_q_sys_');

it('a replay worker being made when the last other native object closes gets a runtime that is gone', async () => {
  const env = readTestEnv();
  const probe = path.join(__dirname, 'idleRuntimeProbe.ts');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', probe, env.temporalAddress, env.bundlePath, history], { timeout: 60_000 });
  const { shutDown, outcome } = JSON.parse(stdout) as { shutDown: boolean; outcome: string };
  // The close must have shut the runtime down for the case to say anything; it did every time this was tried.
  expect(shutDown).toBe(true);
  if (outcome === 'replayed') throw upstreamChanged('a replay worker started before the runtime shut down fails after it', "replayAll's thenWait and the doctor test's held connection");
  expect(outcome).toMatch(/failed to downcast any to .*Runtime/);
}, 90_000);
