import { Client, Connection } from '@temporalio/client';
import { temporalTargetOf } from '../support/temporal';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { replayAll, type ReplayReport } from '../../src/ops/replayAll';
import { Temporal } from '../../src/temporal';
import { readTestEnv, testDataRoot } from '../setup/env';
import { eventually } from '../support/clients';
import { skipReplayOf } from '../support/replaySkip';

/**
 * replayAll against real histories: tiny workflows recorded with
 * probe/v1.ts on the test server and replayed with probe/v2.ts, where one
 * changed its commands, one stayed, one no longer exists, one fails its
 * workflow task for ever in both, and one was left by a worker that took its
 * task and went away (as a killed worker or a stopped test stack leaves it).
 */
const env = readTestEnv();
const taskQueue = `replay-probe-${process.pid}`;
const ids = { changed: `${taskQueue}/changed`, steady: `${taskQueue}/steady`, gone: `${taskQueue}/gone`, stuck: `${taskQueue}/stuck`, abandoned: `${taskQueue}/abandoned` };
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

let connection: Connection;
/** Keeps the SDK's Runtime alive between this file's replays (see below). */
let runtimeHold: NativeConnection;
let client: Client;
let v1: string;
let v2: string;

async function bundle(version: string): Promise<string> {
  const file = path.join(testDataRoot, `replay-probe-${version}.js`);
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve(`./probe/${version}`), logger: quiet });
  fs.writeFileSync(file, code);
  return file;
}

const check = (bundlePath: string, extra: Partial<Parameters<typeof replayAll>[0]> = {}): Promise<ReplayReport> =>
  replayAll({ temporal: Temporal.over(client), bundlePath, query: `TaskQueue = "${taskQueue}"`, ...extra });

beforeAll(async () => {
  // The probe worker's failing task and the replayer's verdicts are expected here: keep them out of the output.
  installQuietRuntime();
  // Not Dipper's workflows: the run's final replay over the namespace leaves them out.
  for (const workflowId of Object.values(ids)) skipReplayOf({ workflowId, reason: 'replayAll.test.ts probe' });
  connection = await Connection.connect(temporalTargetOf(env));
  // The SDK's Runtime shuts itself down when its last native object goes, and a replay worker being made in that
  // moment gets the dead runtime ("failed to downcast any to … Runtime"; test/upstream/idleRuntime.test.ts): this
  // file replays again and again, once in 1 CI run so far right as the one before let go. A connection held for the
  // whole file keeps the runtime up.
  runtimeHold = await NativeConnection.connect(temporalTargetOf(env));
  client = new Client({ connection, namespace: env.namespace });
  [v1, v2] = await Promise.all([bundle('v1'), bundle('v2')]);
  const workerConnection = await NativeConnection.connect(temporalTargetOf(env));
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: env.namespace,
    taskQueue,
    workflowBundle: { codePath: v1 },
  });
  await worker.runUntil(async () => {
    const start = (type: string, workflowId: string) => client.workflow.start(type, { taskQueue, workflowId, args: [] });
    await (await start('changedProbe', ids.changed)).result();
    await (await start('steadyProbe', ids.steady)).result();
    await (await start('goneProbe', ids.gone)).result();
    const stuck = await start('stuckProbe', ids.stuck);
    await eventually(async () => ((await stuck.describe()).raw.pendingWorkflowTask?.attempt ?? 0) > 1 || undefined);
  });
  await workerConnection.close();
  await abandonTask();
  // Visibility trails the server's writes a little.
  await eventually(async () => (await client.workflow.count(`TaskQueue = "${taskQueue}"`)).count === 5 || undefined);
}, 120_000);

/**
 * Takes a workflow task as a worker would and never answers it: the task
 * times out and waits, at attempt 2, for a worker that never comes.
 */
async function abandonTask(): Promise<void> {
  const handle = await client.workflow.start('steadyProbe', { taskQueue, workflowId: ids.abandoned, args: [], workflowTaskTimeout: '1s' });
  // Long polls need a deadline; the task is already queued, so this answers at once.
  const polled = await connection.withDeadline(Date.now() + 30_000, () =>
    client.workflowService.pollWorkflowTaskQueue({ namespace: env.namespace, taskQueue: { name: taskQueue }, identity: 'replayAll.test.ts' }),
  );
  expect(polled.workflowExecution?.workflowId).toBe(ids.abandoned);
  await eventually(async () => ((await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0) === 2 || undefined);
}

afterAll(async () => {
  await client.workflow.getHandle(ids.stuck).terminate('replayAll.test.ts is done');
  await client.workflow.getHandle(ids.abandoned).terminate('replayAll.test.ts is done');
  await connection.close();
  await runtimeHold?.close();
});

describe('replayAll', () => {
  it('finds the history whose code changed its commands, and only that one', async () => {
    const report = await check(v2);
    expect(report.listed).toBe(5);
    expect(report.replayed).toBe(5);
    expect(report.nondeterministic.map((p) => p.workflowId)).toEqual([ids.changed]);
    expect(report.nondeterministic[0].message).toMatch(/^\[TMPRL1100\] Nondeterminism error: .*HistoryEvent\(id: \d+, TimerStarted\)/);
  });

  it('counts a history the code cannot replay at all as a failure, not as nondeterminism', async () => {
    const report = await check(v2);
    expect(report.failed.map((p) => p.workflowId)).toEqual([ids.gone]);
    expect(report.failed[0].message).toBe("Failed to initialize workflow of type 'goneProbe': no such function is exported by the workflow bundle");
  });

  it('replays every history cleanly with the code that recorded them', async () => {
    const report = await check(v1);
    expect(report.nondeterministic).toEqual([]);
    expect(report.failed).toEqual([]);
  });

  it('names a running workflow whose workflow task keeps failing as stuck', async () => {
    const report = await check(v1);
    expect(report.stuck.map((p) => p.workflowId)).toEqual([ids.stuck]);
    expect(report.stuck[0].message).toMatch(/^workflow task failed, attempt \d+$/);
  });

  it('does not call a task whose worker went away stuck', async () => {
    const abandoned = await client.workflow.getHandle(ids.abandoned).describe();
    expect(abandoned.raw.pendingWorkflowTask?.attempt).toBe(2);
    const report = await check(v1);
    expect(report.stuck.map((p) => p.workflowId)).not.toContain(ids.abandoned);
  });

  it('gives the same verdicts with replayers side by side, each history to exactly one of them', async () => {
    // Three replayers for five histories, one of which (the changed one) fails: each replayer's verdicts must stay
    // paired with the histories it was handed, and the runtime must outlive the first replayer to finish.
    const [one, three] = await Promise.all([check(v2), check(v2, { replayers: 3 })]);
    const verdicts = (r: ReplayReport) => ({
      replayed: r.replayed,
      nondeterministic: r.nondeterministic.map((p) => p.workflowId),
      failed: r.failed.map((p) => p.workflowId),
      stuck: r.stuck.map((p) => p.workflowId).sort(),
    });
    expect(verdicts(three)).toEqual(verdicts(one));
    expect(verdicts(three)).toEqual({ replayed: 5, nondeterministic: [ids.changed], failed: [ids.gone], stuck: [ids.stuck] });
    // More replayers than histories: the idle ones end without a history, the rest as before.
    const many = await check(v1, { replayers: 8 });
    expect([many.replayed, many.nondeterministic, many.failed]).toEqual([5, [], []]);
  });

  it('leaves out what it is told to skip, with the reason', async () => {
    const report = await check(v2, { skip: (wf) => (wf.workflowId === ids.changed ? 'changed on purpose' : undefined) });
    expect(report.skipped).toEqual([{ workflowId: ids.changed, runId: expect.any(String), reason: 'changed on purpose' }]);
    expect(report.replayed).toBe(4);
    expect(report.nondeterministic).toEqual([]);
  });

  it('replays again only what an earlier pass did not replay well at the same length', async () => {
    const first: { workflowId: string; runId: string; events: number; verdict: string }[] = [];
    await check(v2, { onReplayed: (o) => first.push(o) });
    expect(first).toHaveLength(5);
    // The same length says the same history: the closed history replayed well is reused. The open ones replayed well
    // (stuck, abandoned) may still grow (a dead worker's sticky task times out into history), so they are known here
    // at another length, as a history that grew is: replayed again.
    const same = first.filter((o) => o.verdict === 'ok' && o.workflowId === ids.steady);
    const grown = first.filter((o) => o.verdict === 'ok' && o.workflowId !== ids.steady);
    expect([same.length, grown.length]).toEqual([1, 2]);
    const known = new Map([...same.map((o) => [o.runId, o.events] as const), ...grown.map((o) => [o.runId, o.events - 1] as const)]);
    const again: string[] = [];
    const report = await check(v2, { replayedBefore: (runId, events) => known.get(runId) === events, onReplayed: (o) => again.push(o.runId) });
    expect(report.replayed).toBe(5);
    expect(report.reused).toBe(1);
    expect(again.sort()).toEqual(first.filter((o) => o.workflowId !== ids.steady).map((o) => o.runId).sort());
    // Verdicts stand for what was replayed again: the changed history is still found.
    expect(report.nondeterministic.map((p) => p.workflowId)).toEqual([ids.changed]);
  });
});
