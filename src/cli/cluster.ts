import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { backupCluster, restoreCluster } from '../cluster/backup';
import { backupKey, maxFileBytes } from './backup';
import { isRunning } from '../devstack/processes';
import { CLUSTER_DATABASES, startCluster } from '../cluster/cluster';
import { localBin, projectRoot } from '../common/projectRoot';

const log = (line: string) => process.stderr.write(`cluster: ${line}\n`);

/** The PostgreSQL role the cluster uses: it must be allowed to create databases. */
export function postgresFromEnv(): { host: string; port: number; user: string; password: string } {
  const url = new URL(process.env.DIPPER_CLUSTER_POSTGRES_URL ?? 'postgres://dipper:dipper@127.0.0.1:5432/postgres');
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

const clusterDir = () => path.resolve(process.env.DIPPER_CLUSTER_DIR ?? path.join(projectRoot, '.dipper-cluster'));
/** `cluster test`'s own folder, databases and ports: nothing of a cluster that is up is touched. */
const testDir = () => `${clusterDir()}-test`;
const TEST_DATABASES = { main: 'dipper_clustertest_temporal', visibility: 'dipper_clustertest_visibility', dipper: 'dipper_clustertest' };

/** `dipper cluster up`: starts the cluster, restarts what dies, and keeps it until Ctrl-C. */
export async function clusterUp(): Promise<number> {
  const cluster = await startCluster({
    projectRoot,
    dir: clusterDir(),
    pg: postgresFromEnv(),
    fresh: false,
    basePort: Number(process.env.DIPPER_CLUSTER_PORT ?? 29300),
    bind: process.env.DIPPER_CLUSTER_BIND || undefined,
    extraEnv: {},
    supervise: true,
    log,
  });
  const { record } = cluster;
  const dir = clusterDir();
  process.stdout.write(
    [
      `Dipper (cluster shape) at ${record.url}  (HAProxy in front of ${record.processes.filter((p) => p.role === 'gateway').length} gateways)${record.publicUrl !== record.url ? `; agents are told ${record.publicUrl}` : ''}`,
      `Temporal server ${record.temporalAddress} (mutual TLS; HTTP API ${record.temporalHttpAddress}; metrics ${record.temporalMetricsUrl}) on PostgreSQL; Dipper's tables in ${record.databaseUrl.replace(/:[^:@/]*@/, ':***@')}`,
      `operator token: ${record.operatorToken}`,
      ...Object.entries(record.secretsFrom).map(([k, v]) => `  ${k} from ${v}`),
      ...record.processes.map((p) => `  ${p.name.padEnd(16)} pid ${p.pid}  log ${p.log}${p.url ? `  ${p.url}` : ''}${p.metricsUrl ? `  metrics ${p.metricsUrl}` : ''}`),
      `  temporal         pid ${record.pids.temporal}  log ${path.join(dir, 'temporal.log')}`,
      `  haproxy          pid ${record.pids.lb}  log ${path.join(dir, 'haproxy.log')}`,
      `State: ${dir} (cluster.json: every address and pid, kept current; secrets.json; the hosts' folders; logs). A process that dies is started again.`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await cluster.stop();
  return 0;
}

/**
 * `dipper cluster test`: a fresh cluster, then jest against it: the
 * cluster's own tests (test/cluster: a run through the load balancer while
 * a worker and a gateway are killed) and the end-to-end and durability
 * suites, whose stacks then use the cluster's Temporal server and
 * PostgreSQL instead of the dev server and SQLite.
 */
export async function clusterTest(jestArgs: string[]): Promise<number> {
  const started = Date.now();
  const basePort = Number(process.env.DIPPER_CLUSTER_TEST_PORT ?? 29500);
  const taken = await portsInUse(basePort, [0, 1, 9, 20, 21, 22, 30, 40, 41]);
  if (taken.length > 0) {
    log(`ports ${taken.join(', ')} are in use (a cluster test already running?); DIPPER_CLUSTER_TEST_PORT picks others`);
    return 1;
  }
  // Its own secrets each time: a fresh cluster, whose tokens nobody holds.
  fs.rmSync(path.join(testDir(), 'secrets.json'), { force: true });
  const cluster = await startCluster({
    projectRoot,
    dir: testDir(),
    pg: postgresFromEnv(),
    fresh: true,
    basePort,
    databases: TEST_DATABASES,
    extraEnv: {
      DIPPER_SKILLS_DIR: path.join(projectRoot, 'test', 'fixtures', 'skills'),
      DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'none' }, skills: { worker: { kind: 'command', command: ['sleep', '600'] } } }),
      DIPPER_TERMINATE_GRACE_SECONDS: '5',
      DIPPER_LOG_LEVEL: 'warn',
    },
    // The tests kill and start its processes themselves; its secrets are its own, not the operator's.
    env: {},
    log,
  });
  log(`up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const args = jestArgs.length > 0 ? jestArgs : ['test/cluster', 'test/e2e', 'test/durability'];
  try {
    return await new Promise<number>((resolve) => {
      const jest = spawn(localBin('jest'), ['--runInBand', ...args], {
        stdio: 'inherit',
        env: {
          ...process.env,
          DIPPER_TEST_CLUSTER: path.join(testDir(), 'cluster.json'),
          // The tests that start stacks of their own on PostgreSQL (two hosts, the PostgreSQL stack) use the cluster's.
          DIPPER_TEST_DATABASE_URL: process.env.DIPPER_TEST_DATABASE_URL ?? cluster.record.databaseUrl,
        },
      });
      jest.once('exit', (code) => resolve(code ?? 1));
    });
  } finally {
    await cluster.stop();
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

/** Which of base+offsets something listens on already (loopback). */
async function portsInUse(base: number, offsets: number[]): Promise<number[]> {
  const busy = await Promise.all(
    offsets.map(
      (o) =>
        new Promise<number | null>((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port: base + o });
          socket.once('connect', () => {
            socket.destroy();
            resolve(base + o);
          });
          socket.once('error', () => resolve(null));
        }),
    ),
  );
  return busy.filter((p): p is number => p !== null);
}

/** `dipper cluster backup <folder>`: the cluster of DIPPER_CLUSTER_DIR, while it runs. */
export async function clusterBackup(folder: string, opts: { maxFileBytes?: string } = {}): Promise<number> {
  const dir = clusterDir();
  const key = backupKey({ create: true, notIn: [dir, folder] });
  const manifest = await backupCluster({ dir, pg: postgresFromEnv(), databases: CLUSTER_DATABASES, to: folder, key, maxFileBytes: maxFileBytes(opts.maxFileBytes), log });
  const left = manifest.skipped.length > 0 ? `; left out ${manifest.skipped.length} files of the hosts' folders (named above)` : '';
  process.stdout.write(`backed up ${manifest.dumps.length} databases and ${manifest.kept.join(', ')} into ${folder}, signed with ${key.file}${left}\n`);
  return 0;
}

/** `dipper cluster restore <folder>`: into DIPPER_CLUSTER_DIR, which must be empty; the cluster must be stopped. */
export async function clusterRestore(folder: string): Promise<number> {
  const dir = clusterDir();
  if (fs.existsSync(path.join(dir, 'cluster.json'))) {
    const record = JSON.parse(fs.readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as { pids?: { temporal?: number } };
    if (record.pids?.temporal && isRunning(record.pids.temporal)) {
      log(`the cluster in ${dir} is running (Temporal pid ${record.pids.temporal}); stop it first`);
      return 1;
    }
  }
  restoreCluster({ from: folder, dir, pg: postgresFromEnv(), key: backupKey({ create: false, notIn: [dir, folder] }), log });
  process.stdout.write(`restored into ${dir}; start it with: npm run dipper -- cluster up\n`);
  return 0;
}
