import fs from 'node:fs';
import path from 'node:path';
import { testDataRoot } from '../setup/env';
import { AgentClient, eventually } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { startProcess, type DipperProcess } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { connectTemporal } from '../support/temporal';
import { isRunning } from '../../src/devstack/processes';

/**
 * Dipper on two hosts, played on one machine: two workers that name
 * different hosts and keep different data folders (each host's own disk),
 * sharing Temporal and PostgreSQL. A run is pinned to the host whose worker
 * claimed it: its folders, plan files and processes are there, and only
 * that host's workers start and stop them, even after the worker that
 * started them died. Runs where DIPPER_TEST_DATABASE_URL names a server.
 */
const url = process.env.DIPPER_TEST_DATABASE_URL;
const maybe = url ? describe : describe.skip;

const hostDir = (host: string) => path.join(testDataRoot, `hosts-${host}`);
const pidOf = (dataDir: string, runId: string, agentId: string): number | undefined => {
  const file = path.join(dataDir, 'runs', runId, 'agents', agentId, 'runtime.pid');
  return fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8').split(' ')[0]) : undefined;
};

maybe('runs pinned to hosts', () => {
  let stack: Stack;
  let hostB: DipperProcess | undefined;
  let hostA2: DipperProcess | undefined;
  const clients: AgentClient[] = [];
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    for (const host of ['a', 'b']) fs.rmSync(hostDir(host), { recursive: true, force: true });
    stack = await startStack('hosts', 28880, {
      DIPPER_DATABASE_URL: url!,
      DIPPER_HOST_ID: 'host-a',
      DIPPER_DATA_DIR: hostDir('a'),
      DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'command', command: ['sleep', '300'] } }),
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all([hostB?.kill(), hostA2?.kill()]);
    await stack?.stop();
    await Promise.all(closers.map((c) => c()));
  });

  const connect = async (token: string) => {
    const c = await AgentClient.connect(stack.gatewayUrl, token);
    clients.push(c);
    return c;
  };
  const startRun = async (task: string) => {
    const res = await stack.operator.request('POST', '/runs', { task });
    expect(res.status).toBe(201);
    const runId: string = res.json.run_id;
    const rootId: string = res.json.root.agent_id;
    // A claim taken by a worker that was then killed is retried after its 30 s start-to-close timeout.
    const host = await eventually(async () => (await stack.operator.request('GET', `/runs/${runId}`)).json.host ?? undefined, 45_000, 100);
    return { runId, rootId, host: host as string, root: await connect(res.json.root.agent_token) };
  };

  it("keep a run's files and processes on its host, started and stopped only by that host's workers", async () => {
    const { client: temporal, close } = await connectTemporal();
    closers.push(close);
    // Only host A has a worker: the run is A's.
    const onA = await startRun('pinned to A');
    expect(onA.host).toBe('host-a');
    const rootPidA = await eventually(async () => pidOf(hostDir('a'), onA.runId, onA.rootId));
    expect(fs.existsSync(path.join(hostDir('a'), 'runs', onA.runId, 'workspace'))).toBe(true);

    // Host B's worker comes up; A's dies (its processes live on, as on any worker crash).
    hostB = startProcess('worker', { ...stack.env, DIPPER_HOST_ID: 'host-b', DIPPER_DATA_DIR: hostDir('b') }, path.join(testDataRoot, 'hosts-worker-b.log'));
    await stack.worker.kill('SIGKILL');
    const onB = await startRun('pinned to B');
    expect(onB.host).toBe('host-b');
    const rootPidB = await eventually(async () => pidOf(hostDir('b'), onB.runId, onB.rootId));
    expect(fs.existsSync(path.join(hostDir('a'), 'runs', onB.runId))).toBe(false);

    // With A's worker down, A's run still answers calls (workflows and stores are shared through servers).
    // (Right after a worker dies its workflows' Queries are refused as `unavailable` until another worker takes them.)
    const peers = await eventually(async () => {
      const out = await onA.root.call('list_peers', { scope: 'all' });
      return out.isError ? (expect(out.error?.code).toBe('unavailable'), undefined) : out.data.peers;
    }, 30_000, 250);
    expect(peers).toHaveLength(1);
    expect(isRunning(rootPidA)).toBe(true);

    // A's next worker adopts what the dead one started, and does A's file and process work.
    hostA2 = startProcess('worker', stack.env, path.join(testDataRoot, 'hosts-worker-a2.log'));
    // Until it polls, a step on A's queue is given up after 10 s and the call answers `unavailable`, changing nothing.
    await eventually(
      async () => {
        const out = await onA.root.call('declare_plan', { tasks: [{ id: 'x', role: 'dev', skill: 'worker', task: 'Do x.' }] });
        if (!out.isError) return out.data;
        expect(out.error?.code).toBe('unavailable');
        return undefined;
      },
      60_000,
      200,
    );
    expect(fs.existsSync(path.join(hostDir('a'), 'runs', onA.runId, 'agents', onA.rootId))).toBe(true);
    const child = await onA.root.ok('spawn_agent', { task_id: 'x' });
    const childPid = await eventually(async () => pidOf(hostDir('a'), onA.runId, child.agent_id), 30_000);
    expect(pidOf(hostDir('b'), onA.runId, child.agent_id)).toBeUndefined();
    expect(fs.existsSync(path.join(hostDir('b'), 'runs', onA.runId))).toBe(false);

    // Cancelling stops each run's processes on its own host: A's by the worker that adopted them.
    for (const run of [onA, onB]) expect((await stack.operator.request('POST', `/runs/${run.runId}/cancel`, { reason: 'done' })).status).toBe(200);
    await untilNothingRunning(temporal, hostDir('a'), onA.runId);
    await untilNothingRunning(temporal, hostDir('b'), onB.runId);
    for (const pid of [rootPidA, rootPidB, childPid]) expect(isRunning(pid)).toBe(false);
  }, 120_000);
});
