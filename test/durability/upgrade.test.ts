import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../../src/devstack/devServer';
import { freePort } from '../../src/devstack/dipperProcess';
import { diagnose } from '../../src/ops/doctor';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { HISTORY_CHANNEL_ARGS, replayAll } from '../../src/ops/replayAll';
import { Temporal, TemporalAdmin } from '../../src/temporal';
import { buildIdOf } from '../../src/versioning/buildId';
import { startPromotion } from '../../src/versioning/promote';
import { readTestEnv, testDataRoot } from '../setup/env';
import { AgentClient, eventually, Operator } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { HoldingProxy } from '../support/holdingProxy';
import { projectRoot, startProcess, waitForHttp, type DipperProcess } from '../support/processes';
import { deploymentOf, DRAINED, failedTasks, PINNED, taskVersions, writeVariantBundle } from '../support/versions';

/**
 * An upgrade that cannot break live runs (docs/decisions.md, "Versions of
 * the workflow code"), on a Temporal dev server of its own whose versions
 * report drainage every second. Runs start on version A (today's code) with a
 * question, an approval and an iSphere download pending; workers of version
 * B (test/fixtures/versions/b: the file operation's workflow changed
 * incompatibly, every workflow given a Query only B answers) come up and
 * make B current; the download finishes on A, A drains and its workers
 * are retired; the question is answered, the approval decided and sent and
 * the run ended, all on B. Then every history replays with the code its
 * version ran, and none has a failed workflow task.
 */
const base = readTestEnv();
const dir = path.join(testDataRoot, 'upgrade');
const queue = 'dipper-upgrade';
const logOf = (name: string) => path.join(dir, `${name}.log`);

let server: DevServer;
let connection: Connection;
let temporal: Client;
let proxy: HoldingProxy;
let gateway: DipperProcess;
const workers: Record<string, DipperProcess> = {};
const clients: AgentClient[] = [];
let env: Record<string, string>;
let operator: Operator;
let gatewayUrl: string;
const bundles = { A: base.bundlePath, B: path.join(dir, 'bundle-b.js') };
const builds = { A: '', B: '' };

const startWorker = (name: string, version: 'A' | 'B') => (workers[name] = startProcess('worker', { ...env, DIPPER_WORKFLOW_BUNDLE: bundles[version] }, logOf(`worker-${name}`)));

beforeAll(async () => {
  // The replayer's verdict on the history crossed on purpose below is expected: keep it out of the output.
  installQuietRuntime();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const temporalPort = await freePort(Number(process.env.DIPPER_TEST_TEMPORAL_PORT ?? 27233) + 400, 1002);
  const gatewayPort = await freePort(Number(process.env.DIPPER_TEST_GATEWAY_PORT ?? 28710) + 400);
  // Bundle B while the server starts: the two slowest steps of the setup.
  const [started] = await Promise.all([
    startDevServer({
      projectRoot,
      port: temporalPort,
      uiPort: temporalPort + 1000,
      headless: true,
      reuse: false,
      logFile: logOf('temporal'),
      // Temporal's defaults (3 minutes) are for production; here a drained version says so within seconds.
      dynamicConfig: { 'matching.wv.VersionDrainageStatusRefreshInterval': '1s', 'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '1s' },
    }),
    writeVariantBundle(bundles.B, require.resolve('../fixtures/versions/b'), [require.resolve('../../workflows/interceptors'), require.resolve('../fixtures/versions/b/interceptors')]),
  ]);
  server = started;
  builds.A = buildIdOf(fs.readFileSync(bundles.A));
  builds.B = buildIdOf(fs.readFileSync(bundles.B));
  connection = await Connection.connect({ address: server.address, channelArgs: HISTORY_CHANNEL_ARGS });
  temporal = new Client({ connection, namespace: base.namespace });
  // Downloads from the bridge wait here on cue: a pinned workflow in flight across the upgrade.
  proxy = new HoldingProxy(base.processEnv.DIPPER_ISPHERE_BRIDGE_URL, (method, p) => method === 'GET' && /^\/v1\/files\/[^/]+\/content/.test(p));
  env = {
    // Its own dev server takes plain connections: under `dipper cluster test` the shared settings carry the cluster's TLS.
    ...Object.fromEntries(Object.entries(base.processEnv).filter(([k]) => !k.startsWith('TEMPORAL_TLS_'))),
    TEMPORAL_ADDRESS: server.address,
    DIPPER_TASK_QUEUE: queue,
    DIPPER_PORT: String(gatewayPort),
    DIPPER_DATA_DIR: path.join(dir, 'data'),
    // Its own chain, so its own witness.
    DIPPER_AUDIT_WITNESS: path.join(dir, 'audit-witness.json'),
    DIPPER_ISPHERE_BRIDGE_URL: await proxy.start(),
    DIPPER_LOG_LEVEL: 'info',
  };
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  operator = new Operator({ gatewayUrl, operatorToken: base.operatorToken });
  gateway = startProcess('gateway', env, logOf('gateway'));
  startWorker('a1', 'A');
  await waitForHttp(`${gatewayUrl}/healthz`);
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all([gateway?.kill(), ...Object.values(workers).map((w) => w.kill())]);
  await proxy?.stop();
  await connection?.close();
  await server?.stop();
});

const connect = async (token: string, surface: 'beidou' | 'agentteam' | 'isphere' = 'beidou') => {
  const c = await AgentClient.connect(gatewayUrl, token, surface);
  clients.push(c);
  return c;
};
const logSays = (name: string, text: string) => eventually(async () => (fs.readFileSync(logOf(`worker-${name}`), 'utf8').includes(text) ? true : undefined), 60_000, 200);
const codeVersion = (workflowId: string) =>
  eventually(
    async () => {
      const handle = temporal.workflow.getHandle(workflowId);
      // A worker that has not run the workflow yet refuses Queries until a task warms it (workflows/interceptors.ts).
      await handle.signal('dipperWake');
      return handle.query<string>('codeVersion').catch(() => undefined);
    },
    30_000,
    250,
  );

it('moves live runs from version A to B: pinned work finishes on A, everything else goes on under B', async () => {
  const started = Date.now();
  const deployment = deploymentOf(connection, base.namespace, queue);
  expect(builds.A).toMatch(/^0\.1\.0-[0-9a-f]{12}$/);
  expect(builds.B).not.toBe(builds.A);
  // A's worker made its own version current.
  await eventually(async () => ((await deployment.current()) === builds.A ? true : undefined), 60_000, 200);

  // On A: a run whose root asks the person a question, has an approval pending and a download in flight.
  const run = (await operator.request('POST', '/runs', { task: 'Upgrade under me.' })).json as { run_id: string; root: { agent_id: string; agent_token: string } };
  const runId = run.run_id;
  const root = await connect(run.root.agent_token);
  const isphere = await connect(run.root.agent_token, 'isphere');
  const tasks = await connect(run.root.agent_token, 'agentteam');
  const asked: Promise<any> = root.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Ship it?', header: 'Ship', multiSelect: false, options: [] }] } }, undefined, { timeout: 120_000 });
  const question = await eventually(async () => (await operator.request('GET', `/questions?run=${runId}`)).json.questions?.[0], 30_000, 200);
  const send = { target_type: 'contact', target_id: 'c_0003', content_text: 'Shipped across an upgrade.', idempotency_key: 'upgrade-note' };
  const approvalId: string = (await isphere.ok('isphere_send_message', send)).approval.approval_id;
  const [file] = (await isphere.ok('isphere_receive_files', { conversation_id: 'conv_g_0001' })).files;
  const fetch = { mode: 'download', file_id: file.file_id, message_id: file.message_id, output_dir: path.join(dir, 'data', 'runs', runId, 'workspace', 'isphere', 'downloads'), dry_run: false };
  proxy.hold();
  const fetched = isphere.call('isphere_receive_files', fetch);
  await eventually(async () => (proxy.held > 0 ? true : undefined), 30_000, 50);
  const [fileOp] = await eventually(async () => ((ids) => (ids.length ? ids : undefined))(await listIds(`WorkflowType = 'isphereFileWorkflow'`)), 30_000, 200);
  // The execution held on A: a repeat of the call after its wait may start another under the same id, on B.
  const fileOpRun = (await temporal.workflow.getHandle(fileOp).describe()).runId;
  const ids = { run: `run/${runId}`, root: `run/${runId}/agent/${run.root.agent_id}`, question: `run/${runId}/question/${question.qid}`, registry: `tokens/${queue}` };
  await expect(temporal.workflow.getHandle(ids.run).query('codeVersion')).rejects.toThrow();

  // Version B comes up on two "hosts" at once; both try to make it current, and it is.
  startWorker('b1', 'B');
  startWorker('b2', 'B');
  await eventually(async () => ((await deployment.current()) === builds.B ? true : undefined), 60_000, 200);
  const promotedAt = await deployment.currentSince();
  // The doctor with B's code leaves the download pinned to A alone, and finds nothing wrong with the rest.
  const doctorOnB = await diagnose({ temporal: Temporal.over(temporal), bundlePath: bundles.B, buildId: builds.B });
  expect([doctorOnB.findings, doctorOnB.replay.skipped.map((x) => x.workflowId)]).toEqual([[], [fileOp]]);

  // The download finishes on A, where it started, though B is current. A call whose wait ended first said so
  // (TIMEOUT, file_op_in_progress), and its repeat gets the saved file.
  proxy.release();
  const outcome = await fetched;
  // An isphere refusal carries its envelope as structured content too: only a call that succeeded counts.
  const repeated = async () => ((out) => (out.isError ? undefined : out.data))(await isphere.call('isphere_receive_files', fetch));
  const saved = outcome.isError ? await eventually(repeated, 30_000, 250) : outcome.data;
  expect(saved.files.map((f: { file_id: string; sha256: string }) => [f.file_id, f.sha256])).toEqual([[file.file_id, file.sha256]]);
  expect(fs.existsSync(saved.files[0].saved_path)).toBe(true);
  const fileRun = await temporal.workflow.getHandle(fileOp, fileOpRun).describe();
  expect(fileRun.status.name).toBe('COMPLETED');
  const opTasks = await taskVersions(temporal, fileOp, fileOpRun);
  expect(opTasks.filter((t) => t.buildId !== builds.A || t.behavior !== PINNED)).toEqual([]);
  expect(opTasks.at(-1)!.at).toBeGreaterThan(promotedAt);

  // An A worker (re)started now leaves the newer version alone; so does A's promotion rule run from here.
  startWorker('a2', 'A');
  await logSays('a2', 'worker version not made current');
  const admin = await TemporalAdmin.connect(server.address);
  const again = startPromotion({ admin, namespace: base.namespace, version: { deploymentName: queue, buildId: builds.A }, mode: 'newer' });
  expect((await again.settled).act).toBe('leave');
  await admin.close();
  expect(await deployment.current()).toBe(builds.B);

  // The long-lived workflows answer with B's code already; A drains and both A workers are retired.
  for (const id of Object.values(ids)) expect(await codeVersion(id)).toBe('B');
  await eventually(async () => ((await deployment.drainage(builds.A)) === DRAINED ? true : undefined), 60_000, 500);
  await Promise.all([workers.a1.kill(), workers.a2.kill()]);

  // On B alone: the question is answered, the approval decided and sent, a new task made, the run ended.
  expect((await operator.request('POST', `/runs/${runId}/questions/${question.qid}/answer`, { answers: [{ selected_labels: [], text: 'Yes.' }] })).status).toBe(200);
  expect((await asked).structuredContent.answer_text).toBe('Ship: Yes.');
  expect((await operator.request('POST', `/runs/${runId}/isphere/approvals/${approvalId}/approve`, {})).status).toBe(200);
  await eventually(async () => (await root.inbox(0, 0)).messages.find((m) => m.content.includes(approvalId)), 30_000, 200);
  expect(await isphere.ok('isphere_send_message', { ...send, dry_run: false, approval_id: approvalId })).toMatchObject({ send_status: 'sent' });
  expect((await tasks.ok('task_create', { channel: runId, tasks: [{ title: 'Made on B' }], idempotency_key: 'after' })).tasks).toHaveLength(1);
  const board = await tasks.ok('task_list', { channel: runId });
  expect(board.items.map((t: { title: string }) => t.title)).toEqual(['Made on B']);
  await root.ok('request_termination', { detail: 'Done across an upgrade.' });
  const ending = await eventually(async () => (await operator.request('GET', `/questions?run=${runId}`)).json.questions?.find((q: { system?: { kind: string } }) => q.system?.kind === 'root_termination'), 30_000, 200);
  expect((await operator.request('POST', `/runs/${runId}/questions/${ending.qid}/answer`, { answers: [{ selected_labels: ['Approve'], text: null }] })).status).toBe(200);
  await eventually(async () => ((await operator.request('GET', `/runs/${runId}`)).json.status === 'completed' ? true : undefined), 30_000, 200);
  await untilNothingRunning(temporal, env.DIPPER_DATA_DIR, runId);

  // Each long-lived workflow ran on A, then on B, as AUTO_UPGRADE; the approval's decision and send ran on B.
  for (const id of [ids.run, ids.root, ids.question, `run/${runId}/approval/${approvalId}`]) {
    const ran = await taskVersions(temporal, id);
    expect([ran[0].buildId, ran.at(-1)!.buildId]).toEqual([builds.A, builds.B]);
    expect(ran.some((t) => t.behavior === PINNED)).toBe(false);
  }

  // Every history replays with the code of its version, and no workflow task failed anywhere.
  const pinnedToA = new Set([fileOp]);
  const onB = await replayAll({ temporal: Temporal.over(temporal), bundlePath: bundles.B, skip: (wf) => (pinnedToA.has(wf.workflowId) ? 'pinned to A' : undefined) });
  expect({ listed: onB.listed, nondeterministic: onB.nondeterministic, failed: onB.failed, stuck: onB.stuck }).toEqual({ listed: expect.any(Number), nondeterministic: [], failed: [], stuck: [] });
  // The run, its root, both questions, the approval and the token registry; the download on A skipped (each of its
  // runs: a repeat of the call after its wait, on a loaded machine, can make a second one).
  expect(onB.replayed).toBeGreaterThanOrEqual(6);
  expect(onB.replayed + onB.skipped.length).toBe(onB.listed);
  expect(new Set(onB.skipped.map((x) => x.workflowId))).toEqual(new Set([fileOp]));
  // Each run of the download replays with the code of the version it ran on: the first on A; a second one, started
  // after B became current (a start asked for again on a loaded machine, seen in CI), on B.
  const opRuns: string[] = [];
  for await (const wf of temporal.workflow.list({ query: `WorkflowId = '${fileOp}'` })) opRuns.push(wf.runId);
  let onAReplayed = 0;
  for (const run of opRuns) {
    const build = (await taskVersions(temporal, fileOp, run))[0]?.buildId;
    const own = await replayAll({ temporal: Temporal.over(temporal), bundlePath: build === builds.B ? bundles.B : bundles.A, query: `WorkflowId = '${fileOp}' AND RunId = '${run}'` });
    expect([run, own.replayed, own.nondeterministic, own.failed]).toEqual([run, 1, [], []]);
    if (build !== builds.B) onAReplayed++;
  }
  expect(opRuns).toContain(fileOpRun);
  // The change was real: B's code cannot go on with what A started, so only pinning kept it whole.
  const crossed = await replayAll({ temporal: Temporal.over(temporal), bundlePath: bundles.B, query: `WorkflowId = '${fileOp}' AND RunId = '${fileOpRun}'` });
  expect(crossed.nondeterministic.length).toBe(1);
  // No workflow task failed, but for Queries the guard refused (a loaded machine meets them).
  for await (const wf of temporal.workflow.list()) expect([wf.workflowId, await failedTasks(temporal, wf.workflowId, wf.runId)]).toEqual([wf.workflowId, []]);
  process.stderr.write(`upgrade: ${onB.replayed + opRuns.length} histories replayed (${onAReplayed} on A); ${((Date.now() - started) / 1000).toFixed(1)} s from A current to the last replay\n`);
}, 180_000);

async function listIds(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of temporal.workflow.list({ query })) ids.push(wf.workflowId);
  return ids;
}
