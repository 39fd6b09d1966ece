import type { Client } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fenceTable, putUpFence } from '../../activities/runtimes/netFence';
import { fenceClaims, resolveAutoUsers } from '../../activities/runtimes/uidClaims';
import { AgentClient, eventually, Operator } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { projectRoot } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { connectTemporal } from '../support/temporal';
import { readTestEnv } from '../setup/env';

/**
 * Agents run as other OS users than the worker (root, in CI), for real: the
 * run's root (skill `lead`) as a named system user, its two workers each as
 * a user number of their own from the range `"user": "auto"` gives the data
 * folder, while another data folder's fence, with the same settings, is up
 * on the host. Each runs a probe that reports
 * what it can reach (test/fixtures/runtimes/accountProbe.js) and then reads
 * or writes what the test orders. The stack keeps its secrets in the data
 * folder, as a default install does, so there is a secrets file to try.
 */
const NAMED_USER = 'dipper-probe';
const root = fs.mkdtempSync('/tmp/dipper-accounts-');
const dataDir = path.join(root, 'data');
/** Another Dipper on this host with the same settings: its fence is up while this stack's agents run. */
const otherDataDir = path.join(root, 'other-data');
/** The workers' user numbers: the range "auto" gave this data folder, read once the worker has started. */
let uidRange: { first: number; last: number };
const ordersDir = path.join(root, 'orders');
const probe = path.join(root, 'bin', 'probe.js');

let stack: Stack;
/** A port the workers' runtime lists in `network.allow`, and one nobody lists, both on every address (IPv4 and IPv6). */
let allowedServer: net.Server;
let otherServer: net.Server;
let operator: Operator;
let temporal: { client: Client; close: () => Promise<void> };
const clients: AgentClient[] = [];
/** Every run a test started, cancelled at the end whatever happened. */
const runs: string[] = [];

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('this test starts agents as other users, so it runs as root (as CI does)');
  try {
    execFileSync('id', ['-u', NAMED_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', NAMED_USER]);
  }
  // The temporary folder is the operator's choice of where data lives: passable, like /var/lib.
  fs.chmodSync(root, 0o711);
  fs.mkdirSync(path.dirname(probe), { mode: 0o755 });
  fs.copyFileSync(path.join(projectRoot, 'test', 'fixtures', 'runtimes', 'accountProbe.js'), probe);
  fs.chmodSync(probe, 0o755);
  fs.mkdirSync(ordersDir, { mode: 0o755 });
  allowedServer = await listening();
  otherServer = await listening();
  const probeRuntime = (user: string, more: object = {}) => ({
    kind: 'command',
    command: [process.execPath, probe],
    user,
    env: { PROBE_DATA_DIR: dataDir, PROBE_ORDERS: ordersDir },
    ...more,
  });
  stack = await startStack('accounts', 28830, {
    DIPPER_DATA_DIR: dataDir,
    DIPPER_OPERATOR_TOKEN: '',
    DIPPER_TOKEN_SECRET: '',
    DIPPER_RUNTIMES: JSON.stringify({
      default: { kind: 'none' },
      skills: {
        lead: probeRuntime(NAMED_USER),
        worker: probeRuntime('auto', { group: 'nogroup', network: { allow: [`[::1]:${portOf(allowedServer)}`, `127.0.0.1:${portOf(allowedServer)}`] } }),
      },
    }),
  });
  const [first, last] = JSON.parse(fs.readFileSync(path.join(dataDir, 'host-ids', 'uid-ranges.json'), 'utf8')).worker.split('-').map(Number);
  uidRange = { first, last };
  const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  operator = new Operator({ gatewayUrl: stack.gatewayUrl, operatorToken: secrets.operatorToken });
  temporal = await connectTemporal();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  // Agents outlive their worker on purpose: a test that failed before its own cancel would leave them running as other users.
  for (const runId of runs) await operator?.request('POST', `/runs/${runId}/cancel`, { reason: 'The test is over.' }).catch(() => undefined);
  for (const runId of runs) await untilNothingRunning(temporal.client, dataDir, runId).catch(() => undefined);
  await stack?.stop();
  await temporal?.close();
  for (const server of [allowedServer, otherServer]) server?.close();
  // The fence outlives its worker on purpose (agents outlive workers); the test's own goes with the test.
  try {
    execFileSync('nft', ['delete', 'table', 'inet', fenceTable(dataDir)], { stdio: 'ignore' });
  } catch {
    // never put up: the tests above have said why
  }
  try {
    execFileSync('nft', ['delete', 'table', 'inet', fenceTable(otherDataDir)], { stdio: 'ignore' });
  } catch {
    // never put up
  }
  fs.rmSync(root, { recursive: true, force: true });
});

async function listening(): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen({ host: '::', port: 0, ipv6Only: false }, resolve));
  return server;
}
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

type Seen = Record<string, { ok: boolean; value?: any; code?: string }>;

/** What an agent's probe has said so far, from its stdout (kept in its runtime folder, the worker's alone). */
function said(runId: string, agentId: string): Seen {
  const file = path.join(dataDir, 'runs', runId, 'agents', agentId, 'stdout.log');
  const seen: Seen = {};
  for (const line of fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []) {
    const { what, ...result } = JSON.parse(line);
    seen[what] = result;
  }
  return seen;
}

const ready = (runId: string, agentId: string) =>
  eventually(async () => (said(runId, agentId).ready ? said(runId, agentId) : undefined), 30_000, 50);

const pidOf = (runId: string, agentId: string) =>
  Number(fs.readFileSync(path.join(dataDir, 'runs', runId, 'agents', agentId, 'runtime.pid'), 'utf8').split(' ')[0]);

/** Gives an agent's probe orders and waits for every answer. */
async function order(runId: string, agentId: string, orders: { name: string; read?: string; write?: string; symlink?: { target: string; path: string } }[]): Promise<Seen> {
  // The probe reads its list whole and acts on what it has not done yet: a later order goes after the earlier ones.
  const file = path.join(ordersDir, `${agentId}.json`);
  const earlier = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : [];
  fs.writeFileSync(file, JSON.stringify([...earlier, ...orders]), { mode: 0o644 });
  return eventually(async () => {
    const seen = said(runId, agentId);
    return orders.every((o) => seen[o.name]) ? seen : undefined;
  }, 15_000, 50);
}

const DOCUMENTED_ENV = ['DIPPER_AGENT_ID', 'DIPPER_AGENT_TOKEN', 'DIPPER_INBOX_URL', 'DIPPER_ISPHERE_MCP_URL', 'DIPPER_MCP_URL', 'DIPPER_RUN_ID', 'DIPPER_TASK_MCP_URL', 'HOME', 'LANG', 'PATH'];

it('runs agents as other users who reach their workspace, team folder and home, and nothing else of Dipper', async () => {
  const run = await operator.startRun('Look around.');
  runs.push(run.run_id);
  const runId = run.run_id;
  const rootId = run.root.agent_id;
  const lead = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
  clients.push(lead);
  await lead.ok('declare_plan', {
    tasks: ['a', 'b'].map((id) => ({ id, role: `${id}-role`, skill: 'worker', task: `Look around as ${id}.`, depends_on: [] })),
  });
  const a = (await lead.ok('spawn_agent', { task_id: 'a' })).agent_id as string;
  const b = (await lead.ok('spawn_agent', { task_id: 'b' })).agent_id as string;
  const seen = { root: await ready(runId, rootId), a: await ready(runId, a), b: await ready(runId, b) };

  const probeUid = Number(execFileSync('id', ['-u', NAMED_USER], { encoding: 'utf8' }).trim());
  expect(seen.root.whoami.value.uid).toBe(probeUid);
  for (const who of [seen.a, seen.b]) {
    expect(who.whoami.value.uid).toBeGreaterThanOrEqual(uidRange.first);
    expect(who.whoami.value.uid).toBeLessThanOrEqual(uidRange.last);
    expect(who.whoami.value.groups).toContain(65534);
  }
  expect(seen.a.whoami.value.uid).not.toBe(seen.b.whoami.value.uid);

  for (const [who, s] of Object.entries(seen)) {
    // Its environment is the documented one and its runtime's own variables: nothing of the worker's.
    expect([who, s.env.value]).toEqual([who, [...DOCUMENTED_ENV, 'PROBE_DATA_DIR', 'PROBE_ORDERS'].sort()]);
    // No capabilities now or later, and nothing it runs (a setuid program) can gain privileges.
    expect([who, s.privileges.value]).toEqual([who, ['CapInh: 0000000000000000', 'CapEff: 0000000000000000', 'CapBnd: 0000000000000000', 'NoNewPrivs: 1']]);
    expect([who, s.node_on_path]).toEqual([who, { ok: true, value: process.version }]);
    for (const refused of ['secrets_file', 'events_db', 'list_data_dir', 'list_runtime_folders', 'own_runtime_folder']) {
      expect([who, refused, s[refused]]).toEqual([who, refused, { ok: false, code: 'EACCES' }]);
    }
    for (const allowed of ['write_home', 'write_workspace']) expect([who, allowed, s[allowed].ok]).toEqual([who, allowed, true]);
  }
  expect(seen.a.write_artifacts.ok).toBe(true);
  expect(seen.a.plans).toEqual({ ok: false, code: 'EACCES' });

  const team = seen.a.whoami.value.cwd as string;
  expect(seen.b.whoami.value.cwd).toBe(team);
  const runWorkspace = seen.root.whoami.value.cwd as string;
  const environ = (agentId: string) => `/proc/${pidOf(runId, agentId)}/environ`;

  // The leader's process started before its team existed; it gets in all the same, and members read what it writes.
  const byRoot = await order(runId, rootId, [
    { name: 'team_file_of_a', read: path.join(team, `from-${a}.txt`) },
    { name: 'artifact_of_a', read: path.join(team, 'artifacts', 'a', 'result.txt') },
    { name: 'write_team', write: path.join(team, 'from-lead.txt') },
    { name: 'environ_of_a', read: environ(a) },
    { name: 'home_of_a', read: path.join(seen.a.whoami.value.home, 'note.txt') },
  ]);
  expect(byRoot.team_file_of_a).toEqual({ ok: true, value: a });
  expect(byRoot.artifact_of_a).toEqual({ ok: true, value: a });
  expect(byRoot.write_team.ok).toBe(true);
  expect(byRoot.environ_of_a).toEqual({ ok: false, code: 'EACCES' });
  expect(byRoot.home_of_a).toEqual({ ok: false, code: 'EACCES' });

  const byB = await order(runId, b, [
    { name: 'team_file_of_a', read: path.join(team, `from-${a}.txt`) },
    { name: 'team_file_of_lead', read: path.join(team, 'from-lead.txt') },
    { name: 'write_team_file_of_a', write: path.join(team, `from-${a}.txt`) },
    { name: 'run_workspace_of_root', read: path.join(runWorkspace, `from-${rootId}.txt`) },
    { name: 'home_of_a', read: path.join(seen.a.whoami.value.home, 'note.txt') },
    { name: 'environ_of_a', read: environ(a) },
    { name: 'environ_of_root', read: environ(rootId) },
  ]);
  expect(byB.team_file_of_a).toEqual({ ok: true, value: a });
  expect(byB.team_file_of_lead).toEqual({ ok: true, value: rootId });
  expect(byB.write_team_file_of_a.ok).toBe(true);
  for (const refused of ['run_workspace_of_root', 'home_of_a', 'environ_of_a', 'environ_of_root']) {
    expect([refused, byB[refused]]).toEqual([refused, { ok: false, code: 'EACCES' }]);
  }

  // Everything stays the worker's; agents get in by group.
  const folder = fs.statSync(team);
  expect([folder.uid, folder.mode & 0o7777]).toEqual([0, 0o2770]);
  expect(fs.statSync(dataDir).mode & 0o777).toBe(0o711);
  expect(fs.statSync(path.join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);

  // The root links the host's root and the data folder into its workspace and names files through them in its report;
  // the worker (root) reads the report's files as no more than a member of the workspace, never through a link.
  const links = await order(runId, rootId, [
    { name: 'link_host', symlink: { target: '/', path: path.join(runWorkspace, 'hostroot') } },
    { name: 'link_data', symlink: { target: dataDir, path: path.join(runWorkspace, 'datalink') } },
  ]);
  expect([links.link_host.ok, links.link_data.ok]).toEqual([true, true]);
  fs.writeFileSync(path.join(runWorkspace, 'worker-only.txt'), 'the worker alone reads this', { mode: 0o600 });
  await lead.ok('signal_review', {
    detail: `[REVIEW REQUIRED] See from-${rootId}.txt, worker-only.txt, hostroot/etc/shadow, hostroot/etc/passwd, datalink/secrets.json and datalink/.`,
  });
  const review = await eventually(async () => {
    const list = (await operator.request('GET', `/questions?run=${runId}`)).json.questions as any[];
    return list.find((q) => q.system?.kind === 'root_review');
  }, 30_000, 100);
  // The positive sign: the root's own file is read and shown.
  expect(review.artifacts.map((f: any) => [f.path, f.preview])).toEqual([[`from-${rootId}.txt`, rootId]]);
  const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  const shown = JSON.stringify(await operator.request('GET', `/runs/${runId}/questions/${review.qid}`));
  for (const secret of Object.values(secrets).filter((v): v is string => typeof v === 'string' && v.length > 8)) expect(shown).not.toContain(secret);

  expect((await operator.request('POST', `/runs/${runId}/cancel`, { reason: 'Seen enough.' })).status).toBe(200);
  await untilNothingRunning(temporal.client, dataDir, runId);
}, 90_000);

/** Every TCP port listening on this host now, as addresses to connect to: loopback for a wildcard, and the host's own address too. */
function listeningTargets(): { host: string; port: number }[] {
  const own = Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && a.family === 'IPv4')
    .map((a) => a!.address);
  const targets = new Map<string, { host: string; port: number }>();
  const add = (host: string, port: number) => targets.set(`${host}|${port}`, { host, port });
  for (const [file, v6] of [['/proc/net/tcp', false], ['/proc/net/tcp6', true]] as const) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A') continue;
      const [hex, portHex] = local.split(':');
      const port = parseInt(portHex, 16);
      const address = v6 ? ipv6Of(hex) : [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
      const wildcard = address === '0.0.0.0' || address === '::';
      if (wildcard) for (const host of [v6 ? '::1' : '127.0.0.1', ...(v6 ? ['127.0.0.1'] : []), ...own]) add(host, port);
      else add(address, port);
    }
  }
  return [...targets.values()];
}

/** /proc/net/tcp6 writes an address as four 32-bit words, each in the host's (little-endian) byte order. */
function ipv6Of(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  for (let i = 0; i < 16; i += 4) bytes.subarray(i, i + 4).reverse();
  const words = [];
  for (let i = 0; i < 16; i += 2) words.push(bytes.readUInt16BE(i).toString(16));
  const mapped = words.slice(0, 5).every((w) => w === '0') && words[5] === 'ffff';
  if (mapped) return [...bytes.subarray(12)].join('.');
  return net.isIPv6(words.join(':')) ? new URL(`http://[${words.join(':')}]`).hostname.replace(/^\[|\]$/g, '') : words.join(':');
}

/** Whether this process (the worker's user, root) opens a connection there: what an agent would reach without the fence. */
function opens(target: { host: string; port: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(target);
    const end = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(5000, () => end(false));
    socket.on('connect', () => end(true));
    socket.on('error', () => end(false));
  });
}

it('fences agents off every listening port but the gateway and their runtime\'s allowed destinations, over IPv4 and IPv6', async () => {
  const run = await operator.startRun('Knock on every door.');
  runs.push(run.run_id);
  const runId = run.run_id;
  const rootId = run.root.agent_id;
  const lead = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
  clients.push(lead);
  await lead.ok('declare_plan', { tasks: [{ id: 'n', role: 'knocker', skill: 'worker', task: 'Knock.', depends_on: [] }] });
  const worker = (await lead.ok('spawn_agent', { task_id: 'n' })).agent_id as string;
  await ready(runId, rootId);
  await ready(runId, worker);

  // Another data folder on this host with the same settings puts up its fence: its "auto" range is another, and
  // user numbers this data folder's fence holds are refused to it, naming whose they are.
  fs.mkdirSync(otherDataDir, { mode: 0o700 });
  const otherRuntimes = { default: { kind: 'none' as const }, bySkill: { worker: { kind: 'command' as const, command: ['agent'], user: 'auto' as string } } };
  resolveAutoUsers(otherRuntimes, otherDataDir, fenceClaims(fenceTable(otherDataDir)));
  const [otherFirst, otherLast] = otherRuntimes.bySkill.worker.user.split('-').map(Number);
  expect(otherLast < uidRange.first || otherFirst > uidRange.last).toBe(true);
  expect(await putUpFence([otherRuntimes.bySkill.worker], 'http://127.0.0.1:1', otherDataDir)).toBe(fenceTable(otherDataDir));
  const taken = { kind: 'command' as const, command: ['agent'], user: `${uidRange.first + 10}-${uidRange.first + 20}` };
  const refused = putUpFence([taken], 'http://127.0.0.1:1', path.join(root, 'third-data'));
  await expect(refused).rejects.toThrow(`already fenced by another Dipper on this host (nft table ${fenceTable(dataDir)}, the data folder ${dataDir})`);

  // The positive sign: each port listed is one the worker's own user reaches now, so a refusal below is the fence's.
  const listed = listeningTargets();
  const open = (await Promise.all(listed.map(async (t) => ((await opens(t)) ? t : null)))).filter((t): t is { host: string; port: number } => t !== null);
  const gatewayPort = Number(new URL(stack.gatewayUrl).port);
  const temporalPort = Number(readTestEnv().temporalAddress.split(':').pop());
  // Among them: Temporal's frontend (the way round every decision), the gateway, and both test servers over IPv4 and IPv6.
  for (const port of [temporalPort, gatewayPort]) expect([port, open.some((t) => t.port === port)]).toEqual([port, true]);
  for (const host of ['127.0.0.1', '::1']) {
    for (const port of [portOf(allowedServer), portOf(otherServer)]) expect([host, port, open.some((t) => t.host === host && t.port === port)]).toEqual([host, port, true]);
  }

  const orders = open.map((t) => ({ name: `connect ${t.host} ${t.port}`, connect: t }));
  const [byRoot, byWorker] = await Promise.all([order(runId, rootId, orders), order(runId, worker, orders)]);
  const fenced = ['EHOSTUNREACH', 'EACCES'];
  for (const t of open) {
    const name = `connect ${t.host} ${t.port}`;
    const loopback = t.host === '127.0.0.1' || t.host === '::1';
    const gateway = t.port === gatewayPort && t.host === '127.0.0.1';
    const allowed = t.port === portOf(allowedServer) && loopback;
    for (const [who, seen, may] of [['root', byRoot, gateway], ['worker', byWorker, gateway || allowed]] as const) {
      const got = seen[name];
      if (may) expect([who, name, got]).toEqual([who, name, { ok: true }]);
      else expect([who, name, got.ok, fenced.includes(got.code!)]).toEqual([who, name, false, true]);
    }
  }

  expect((await operator.request('POST', `/runs/${runId}/cancel`, { reason: 'Every door knocked.' })).status).toBe(200);
  await untilNothingRunning(temporal.client, dataDir, runId);
}, 90_000);
