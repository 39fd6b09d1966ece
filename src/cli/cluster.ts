import { spawn } from 'node:child_process';
import path from 'node:path';
import { startCluster, type Cluster } from '../cluster/cluster';
import { localBin, projectRoot } from './projectRoot';

const log = (line: string) => process.stderr.write(`cluster: ${line}\n`);

/** The PostgreSQL role the cluster uses: it must be allowed to create databases. */
function postgresFromEnv(): { host: string; port: number; user: string; password: string } {
  const url = new URL(process.env.DIPPER_CLUSTER_POSTGRES_URL ?? 'postgres://dipper:dipper@127.0.0.1:5432/postgres');
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

const clusterDir = () => path.resolve(process.env.DIPPER_CLUSTER_DIR ?? path.join(projectRoot, '.dipper-cluster'));

async function start(fresh: boolean, extraEnv: Record<string, string>): Promise<Cluster> {
  return startCluster({
    projectRoot,
    dir: clusterDir(),
    pg: postgresFromEnv(),
    fresh,
    basePort: Number(process.env.DIPPER_CLUSTER_PORT ?? 29300),
    extraEnv,
    log,
  });
}

/** `dipper cluster up`: starts the cluster and keeps it until Ctrl-C. */
export async function clusterUp(): Promise<number> {
  const cluster = await start(false, {});
  const { record } = cluster;
  process.stdout.write(
    [
      `Dipper (cluster shape) at ${record.url}  (HAProxy in front of ${record.processes.filter((p) => p.role === 'gateway').length} gateways)`,
      `Temporal server ${record.temporalAddress} on PostgreSQL; Dipper's tables in ${record.databaseUrl.replace(/:[^:@/]*@/, ':***@')}`,
      `operator token: ${record.operatorToken}`,
      ...record.processes.map((p) => `  ${p.name.padEnd(16)} pid ${p.pid}  log ${p.log}`),
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
  const cluster = await start(true, {
    DIPPER_SKILLS_DIR: path.join(projectRoot, 'test', 'fixtures', 'skills'),
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'none' }, skills: { worker: { kind: 'command', command: ['sleep', '600'] } } }),
    DIPPER_TERMINATE_GRACE_SECONDS: '5',
  });
  log(`up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const args = jestArgs.length > 0 ? jestArgs : ['test/cluster', 'test/e2e', 'test/durability'];
  try {
    return await new Promise<number>((resolve) => {
      const jest = spawn(localBin('jest'), ['--runInBand', ...args], {
        stdio: 'inherit',
        env: {
          ...process.env,
          DIPPER_TEST_CLUSTER: path.join(clusterDir(), 'cluster.json'),
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
