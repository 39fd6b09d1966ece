import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { writeWorkflowBundle } from '../devstack/bundle';
import { loadTemporalDevConfig } from '../devstack/devConfig';
import { ensureNamespace } from '../devstack/namespace';
import { stopProcess } from '../devstack/processes';
import { startProcess, waitForHttp } from '../devstack/dipperProcess';
import { supervise, type Running } from '../devstack/supervise';
import { clusterSecrets, type ClusterSecrets } from './secrets';
import { clientTlsEnv, ensureCerts } from './certs';
import { tlsFromEnv } from '../temporal/tls';
import { createDatabase, ensureServerTools, prepareDatabases, startServer, writeServerConfig, type Postgres } from './temporalServer';

/** What `dipper cluster` started, recorded in `<dir>/cluster.json` for tests and people. */
export interface ClusterRecord {
  /** The load balancer: the one URL agents and operators use. */
  url: string;
  /** The URL agents are told to use (DIPPER_PUBLIC_URL), when it is not `url` (a proxy or DNS name in front). */
  publicUrl: string;
  /** The Temporal server's Prometheus page (loopback). */
  temporalMetricsUrl: string;
  /** Where every secret came from (a variable, a file, or secrets.json), never the secret. */
  secretsFrom: Record<string, string>;
  temporalAddress: string;
  /** The files a Temporal client needs (TEMPORAL_TLS_*): the server takes no connection without them. */
  temporalTls: Record<string, string>;
  /** The frontend's HTTP API (the same TLS). */
  temporalHttpAddress: string;
  operatorToken: string;
  databaseUrl: string;
  /** Each Dipper process: how to find it, and the environment to start it again with. */
  processes: { name: string; role: 'worker' | 'gateway' | 'taskservice'; pid: number; env: Record<string, string>; log: string; url?: string; dataDir?: string; metricsUrl?: string }[];
  pids: { temporal: number; lb: number };
}

export interface ClusterOptions {
  projectRoot: string;
  dir: string;
  /** A PostgreSQL role that may create databases (the Temporal server's and Dipper's tables live there). */
  pg: Postgres;
  /** Drop and recreate the Temporal databases first. */
  fresh: boolean;
  /** First of the ports the cluster uses (about twenty from here). */
  basePort: number;
  /** Added to every Dipper process's environment (runtimes, skills, limits). */
  extraEnv: Record<string, string>;
  log: (line: string) => void;
  /** Start a Dipper process again when it dies, and say so (`cluster up`); off for `cluster test`, whose tests kill and start them. */
  supervise?: boolean;
  /** The databases' names: `cluster test` uses its own, so it never touches a cluster that is up. */
  databases?: { main: string; visibility: string; dipper: string };
  /** The address the load balancer listens on (DIPPER_CLUSTER_BIND); the gateways and workers stay on loopback behind it. */
  bind?: string;
  /** The environment the secrets and settings are read from (process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface Cluster {
  record: ClusterRecord;
  stop(): Promise<void>;
}

/** The Temporal server's two databases, and Dipper's own tables (events, long texts, wakes). */
export const CLUSTER_DATABASES = { main: 'dipper_cluster_temporal', visibility: 'dipper_cluster_visibility', dipper: 'dipper_cluster' };

/**
 * Dipper in a cluster's shape on one machine, without Docker: the Temporal
 * server built from its Go module on PostgreSQL, Dipper's tables in
 * PostgreSQL, two workers that each play a host (own data folder,
 * DIPPER_HOST_ID), two gateway replicas, and HAProxy in front of them with
 * deploy/haproxy.cfg, the load balancer docker-compose.yml uses.
 */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const { dir, pg, log } = opts;
  fs.mkdirSync(dir, { recursive: true });
  const started: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (let next = started.pop(); next; next = started.pop()) await next().catch(() => undefined);
  };
  try {
    // Checked first: without it nothing else is worth starting.
    try {
      execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    } catch {
      throw new Error('haproxy is not installed (Debian: apt-get install haproxy)');
    }
    const tools = ensureServerTools(log);
    const dbs = opts.databases ?? CLUSTER_DATABASES;
    const env = opts.env ?? process.env;
    const { secrets, from: secretsFrom } = clusterSecrets(dir, env);
    log('preparing the Temporal databases');
    prepareDatabases(tools, pg, dbs, opts.fresh);
    createDatabase(tools, pg, dbs.dipper, opts.fresh);
    const frontend = opts.basePort;
    const certs = ensureCerts(path.join(dir, 'certs'));
    const tlsEnv = clientTlsEnv(certs);
    writeServerConfig(opts.projectRoot, path.join(dir, 'temporal'), pg, dbs, { frontend, base: opts.basePort + 1 }, certs);
    log(`starting the Temporal server (${frontend}, mutual TLS)`);
    const temporalAddress = `127.0.0.1:${frontend}`;
    const target = { address: temporalAddress, tls: tlsFromEnv(tlsEnv) };
    const server = await startServer(tools, path.join(dir, 'temporal'), target, path.join(dir, 'temporal.log'));
    started.push(() => stopProcess(server, 10_000));
    const devConfig = loadTemporalDevConfig(opts.projectRoot);
    await ensureNamespace(target, devConfig.namespace, devConfig.searchAttributes);

    const bundle = path.join(dir, 'workflow-bundle.js');
    await writeWorkflowBundle(bundle);
    const lbPort = opts.basePort + 20;
    const bind = opts.bind ?? '127.0.0.1';
    const url = `http://${bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind}:${lbPort}`;
    const publicUrl = (env.DIPPER_PUBLIC_URL || url).replace(/\/$/, '');
    const databaseUrl = `postgres://${encodeURIComponent(pg.user)}:${encodeURIComponent(pg.password)}@${pg.host}:${pg.port}/${dbs.dipper}`;
    const { operatorToken } = secrets;
    // One Task service for the whole cluster, as docker-compose.yml's `tasks`: every worker and gateway reach the same one.
    const tasksPort = opts.basePort + 30;
    const envs = clusterEnvs({ tasksUrl: `http://127.0.0.1:${tasksPort}`, temporalAddress, tlsEnv, namespace: devConfig.namespace, databaseUrl, publicUrl, secrets, bundle, logLevel: env.DIPPER_LOG_LEVEL });
    const common = { ...envs.common, ...opts.extraEnv };
    const processes: ClusterRecord['processes'] = [];
    // Written once the cluster is up, and again whenever a supervised process gets a new pid.
    const kept: { record?: ClusterRecord } = {};
    const save = () => kept.record && fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify(kept.record, null, 2), { mode: 0o600 });
    const run = async (name: string, role: 'worker' | 'gateway' | 'taskservice', procEnv: Record<string, string>, extra: { url?: string; dataDir?: string; metricsUrl?: string }): Promise<void> => {
      const logFile = path.join(dir, `${name}.log`);
      const entry = { name, role, pid: 0, env: procEnv, log: logFile, ...extra };
      processes.push(entry);
      const once = async (): Promise<Running> => {
        const p = startProcess(role, procEnv, logFile);
        const exited = new Promise<string>((resolve) => p.proc.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`)));
        return { pid: p.proc.pid, exited, stop: () => p.kill() };
      };
      if (!opts.supervise) {
        const first = await once();
        entry.pid = first.pid!;
        started.push(() => first.stop());
        return;
      }
      // A process that dies is started again, said on stderr, and its new pid recorded.
      const kept = await supervise(name, once, (pid) => {
        if (entry.pid !== 0) log(`${name} started again (pid ${pid})`);
        entry.pid = pid ?? 0;
        save();
      });
      started.push(() => kept.stop());
    };
    await run('tasks', 'taskservice', { ...common, DIPPER_TASK_SERVICE_PORT: String(tasksPort), DIPPER_TASK_SERVICE_DB: path.join(dir, 'tasks', 'tasks.db') }, {});
    await waitForHttp(`http://127.0.0.1:${tasksPort}/healthz`, 60_000);
    for (const [i, host] of ['host-a', 'host-b'].entries()) {
      const dataDir = path.join(dir, host);
      const metricsPort = opts.basePort + 40 + i;
      await run(`worker-${host}`, 'worker', { ...common, ...envs.worker(host, dataDir, metricsPort) }, { dataDir, metricsUrl: `http://127.0.0.1:${metricsPort}` });
    }
    const gatewayUrls: string[] = [];
    for (const n of [1, 2]) {
      const port = opts.basePort + 20 + n;
      const gatewayUrl = `http://127.0.0.1:${port}`;
      gatewayUrls.push(gatewayUrl);
      await run(`gateway-${n}`, 'gateway', { ...common, ...envs.gateway(port, path.join(dir, `gateway-${n}`)) }, { url: gatewayUrl, metricsUrl: `${gatewayUrl}/metrics` });
    }
    for (const g of gatewayUrls) await waitForHttp(`${g}/healthz`, 60_000);

    log(`starting HAProxy on ${lbPort}`);
    const lb = startHaproxy(opts.projectRoot, dir, `${bind}:${lbPort}`, gatewayUrls);
    started.push(() => stopProcess(lb, 5000));
    await waitForHttp(`${url}/healthz`, 30_000);

    const record: ClusterRecord = {
      url,
      publicUrl,
      temporalAddress,
      temporalTls: tlsEnv,
      temporalHttpAddress: `127.0.0.1:${opts.basePort + 1}`,
      temporalMetricsUrl: `http://127.0.0.1:${opts.basePort + 1 + 8}/metrics`,
      operatorToken,
      secretsFrom,
      databaseUrl,
      processes,
      pids: { temporal: server.pid!, lb: lb.pid! },
    };
    kept.record = record;
    save();
    return { record, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The environment of each of the cluster's Dipper processes. docker-compose.yml
 * gives its containers the same settings (test/devstack.test.ts compares the
 * two, and names the differences a container needs).
 */
export function clusterEnvs(o: {
  tasksUrl: string;
  temporalAddress: string;
  tlsEnv: Record<string, string>;
  namespace: string;
  databaseUrl: string;
  publicUrl: string;
  secrets: ClusterSecrets;
  bundle: string;
  logLevel?: string;
}) {
  const common: Record<string, string> = {
    DIPPER_TASK_API_URL: o.tasksUrl,
    DIPPER_TASK_ADMIN_KEY: o.secrets.taskAdminKey,
    TEMPORAL_ADDRESS: o.temporalAddress,
    ...o.tlsEnv,
    TEMPORAL_NAMESPACE: o.namespace,
    DIPPER_DATABASE_URL: o.databaseUrl,
    DIPPER_PUBLIC_URL: o.publicUrl,
    // HAProxy reaches the gateways from loopback and names each client (deploy/haproxy.cfg).
    DIPPER_TRUSTED_PROXIES: '127.0.0.1',
    DIPPER_OPERATOR_TOKEN: o.secrets.operatorToken,
    DIPPER_TOKEN_SECRET: o.secrets.tokenSecret,
    DIPPER_WORKFLOW_BUNDLE: o.bundle,
    DIPPER_LOG_LEVEL: o.logLevel || 'info',
  };
  return {
    common,
    worker: (host: string, dataDir: string, metricsPort: number) => ({ DIPPER_HOST_ID: host, DIPPER_DATA_DIR: dataDir, DIPPER_WORKER_METRICS_PORT: String(metricsPort) }),
    gateway: (port: number, dataDir: string) => ({ DIPPER_PORT: String(port), DIPPER_DATA_DIR: dataDir }),
  };
}

function startHaproxy(projectRoot: string, dir: string, bindAt: string, gateways: string[]): ChildProcess {
  const out = fs.openSync(path.join(dir, 'haproxy.log'), 'a');
  const proc = spawn('haproxy', ['-db', '-f', path.join(projectRoot, 'deploy', 'haproxy.cfg')], {
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      DIPPER_LB_BIND: bindAt,
      DIPPER_GATEWAY_1: new URL(gateways[0]).host,
      DIPPER_GATEWAY_2: new URL(gateways[1]).host,
    },
  });
  fs.closeSync(out);
  // A spawn that fails (the binary went away) is reported by the health wait, not by an unhandled error.
  proc.on('error', () => undefined);
  return proc;
}
