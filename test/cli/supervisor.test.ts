import fs from 'node:fs';
import path from 'node:path';
import { isRunning } from '../../src/devstack/processes';
import { readTestEnv, testDataRoot } from '../setup/env';
import { AgentClient } from '../support/clients';
import { cleanEnv, dipper, NpmStart, readRecord, until, waitForExit } from './npmStart';

// Ports of its own (2x7xx, below the ephemeral range), apart from the shared test stack's and other tests'.
const gatewayPort = 27710;
const temporalPort = 26233;
const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
const dir = path.join(testDataRoot, 'supervisor');
const stackFile = path.join(dir, 'stack.json');
const shared = readTestEnv();
const env = cleanEnv({
  DIPPER_DATA_DIR: path.join(dir, 'data'),
  DIPPER_STACK_FILE: stackFile,
  DIPPER_PORT: String(gatewayPort),
  DIPPER_TEMPORAL_DEV_PORT: String(temporalPort),
  DIPPER_TEMPORAL_UI_PORT: String(temporalPort + 1),
  DIPPER_SKILLS_DIR: shared.skillsDir,
  DIPPER_WORKFLOW_BUNDLE: shared.bundlePath,
  // A detached agent runtime that idles, so the test can watch it outlive the stack.
  DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'command', command: ['sleep', '300'] } }),
  DIPPER_LOG_LEVEL: 'warn',
});
/** Only where the record is: every other setting must come from it. */
const cliEnv = cleanEnv({ DIPPER_STACK_FILE: stackFile });
const stackTrace = /^\s+at .+:\d+:\d+\)?$/m;

let stack: NpmStart;
let token: string;
let runId: string;
let supervisorPid: number;

beforeAll(async () => {
  fs.mkdirSync(dir, { recursive: true });
  stack = new NpmStart(['--task', 'Stay idle.'], env);
  await stack.waitFor('MCP client config for the root agent:');
  await stack.waitFor('\n}\n');
  const printed = stack.output;
  token = /"agent_token": "([^"]+)"/.exec(printed)![1];
  runId = /"run_id": "([^"]+)"/.exec(printed)![1];
  supervisorPid = readRecord(stackFile).pid;
}, 120_000);

afterAll(async () => {
  if (stack.proc.exitCode === null && stack.proc.signalCode === null) stack.signalGroup('SIGKILL');
  // Agent runtimes outlive every stack by design; these are the test's to end.
  for (const pid of runtimePids(path.join(dir, 'data', 'runs'))) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
});

/** Every agent runtime's pid recorded under the runs folder (runs/<run>/agents/<agent>/runtime.pid). */
function runtimePids(runsDir: string): number[] {
  const list = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : []);
  return list(runsDir)
    .flatMap((run) => list(path.join(run, 'agents')))
    .map((agent) => path.join(agent, 'runtime.pid'))
    .filter((file) => fs.existsSync(file))
    .map((file) => Number(fs.readFileSync(file, 'utf8').split(' ')[0]));
}

/** The root agent answers list_peers: the gateway, the worker and Temporal all serve. */
async function rootAnswers(): Promise<boolean> {
  const agent = await AgentClient.connect(gatewayUrl, token);
  try {
    const peers = await agent.ok('list_peers', { scope: 'all' });
    return peers.peers.length === 1;
  } finally {
    await agent.close();
  }
}

async function killAndWaitForRestart(name: 'temporal' | 'worker' | 'gateway', logName: string): Promise<void> {
  const before = readRecord(stackFile).processes[name]!;
  process.kill(before, 'SIGKILL');
  await stack.waitFor(`dipper: ${logName} exited (signal SIGKILL); restarting in 1s\n`, 30_000);
  await until(`a new ${name}`, () => {
    const pid = readRecord(stackFile).processes[name];
    return pid !== undefined && pid !== before && isRunning(pid);
  });
  await until('the root agent answers', rootAnswers, 90_000);
}

describe('npm start supervises Temporal, the worker and the gateway', () => {
  it('records where the stack is (mode 0600) so the CLI and the Temporal CLI reach it with no settings repeated', async () => {
    expect(fs.statSync(stackFile).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(readRecord(stackFile))).not.toMatch(/dpo_|dpa_|tokenSecret/);

    const status = await dipper(['status'], cliEnv);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Gateway:     ${gatewayUrl}`);

    const started = await dipper(['start-run', '--task', 'Another run.'], cliEnv);
    expect(started.code).toBe(0);
    expect(started.stdout).toContain(`"url": "${gatewayUrl}/mcp/beidou"`);

    const listed = await dipper(['temporal', 'workflow', 'list', '--query', `DipperRunId = "${runId}"`], cliEnv);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`run/${runId}`);
  }, 60_000);

  it('keeps everything it makes in the data folder private: no group or other access', async () => {
    const open: string[] = [];
    const walk = (p: string): void => {
      // A journal SQLite deletes between the listing and this look (temporal.db-journal) is gone, not open.
      const st = fs.lstatSync(p, { throwIfNoEntry: false });
      if (!st) return;
      if (st.mode & 0o077) open.push(`${path.relative(dir, p)} ${(st.mode & 0o777).toString(8)}`);
      if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    };
    walk(path.join(dir, 'data'));
    expect(open).toEqual([]);
    // What the walk covered: the Temporal database, the event log, the secrets, the runs.
    const top = fs.readdirSync(path.join(dir, 'data'));
    expect(top).toEqual(expect.arrayContaining(['secrets.json', 'events.db', 'runs']));
    expect(top.some((f) => f.startsWith('temporal') && f.endsWith('.db'))).toBe(true);
  });

  it('restarts Temporal killed with SIGKILL on the same database, and the worker and gateway reconnect', async () => {
    const { worker, gateway } = readRecord(stackFile).processes;
    await killAndWaitForRestart('temporal', 'Temporal');
    // The run started before the kill still answers, through the same worker and gateway.
    expect(readRecord(stackFile).processes).toMatchObject({ worker, gateway });
  }, 120_000);

  it('restarts a worker killed with SIGKILL', async () => {
    await killAndWaitForRestart('worker', 'worker');
  }, 120_000);

  it('restarts a gateway killed with SIGKILL', async () => {
    await killAndWaitForRestart('gateway', 'gateway');
  }, 120_000);

  it.each([
    ['the same stack', {}, /Dipper is already running \(pid \d+\)/],
    [
      'its gateway port',
      { DIPPER_STACK_FILE: path.join(dir, 'other.json'), DIPPER_DATA_DIR: path.join(dir, 'other') },
      new RegExp(`Port ${gatewayPort} on 127.0.0.1, for the gateway, is in use`),
    ],
    [
      'its Temporal port, which a second stack must not reuse',
      { DIPPER_STACK_FILE: path.join(dir, 'other.json'), DIPPER_DATA_DIR: path.join(dir, 'other'), DIPPER_PORT: '27711' },
      new RegExp(`Port ${temporalPort} on 127.0.0.1, for the Temporal dev server, is in use`),
    ],
  ])('refuses a second npm start against %s, saying why, and exits non-zero', async (_case, overrides, message) => {
    const second = new NpmStart(['--no-run'], { ...env, ...overrides });
    const { code } = await second.exited;
    expect(code).toBe(1);
    expect(second.output).toMatch(message);
    expect(second.output).not.toMatch(stackTrace);
    // The running stack keeps its record.
    expect(readRecord(stackFile).pid).toBe(supervisorPid);
  }, 60_000);

  it('takes Temporal, the worker and the gateway with it when killed with SIGKILL; agent runtimes live on', async () => {
    const record = readRecord(stackFile);
    const runtimes = runtimePids(path.join(record.dataDir, 'runs'));
    expect(runtimes.length).toBeGreaterThan(0);
    expect(runtimes.filter(isRunning)).toEqual(runtimes);

    process.kill(record.pid, 'SIGKILL');
    await Promise.all(Object.values(record.processes).map((pid) => waitForExit(pid!)));
    expect(runtimes.filter(isRunning)).toEqual(runtimes);
    // The record of a dead stack is ignored.
    expect((await dipper(['status'], cliEnv)).code).toBe(1);
  }, 60_000);
});

describe('Ctrl-C', () => {
  it('stops the whole stack and exits 0 with no stack trace when the process group gets SIGINT', async () => {
    // Same data folder as the killed stack above: its stale record must not stop this one.
    const second = new NpmStart(['--no-run'], { ...env, DIPPER_LOG_LEVEL: 'info' });
    await second.waitFor('Ctrl-C stops everything.');
    await second.waitFor('"msg":"worker running"');
    const { processes } = readRecord(stackFile);

    second.signalGroup('SIGINT');
    const { code, signal } = await second.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(second.output).not.toMatch(stackTrace);
    expect(second.output).not.toMatch(/IllegalStateError/);
    await Promise.all(Object.values(processes).map((pid) => waitForExit(pid!)));
    expect(fs.existsSync(stackFile)).toBe(false);
  }, 120_000);
});
