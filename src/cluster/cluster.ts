import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeWorkflowBundle } from '../devstack/bundle';
import { loadTemporalDevConfig } from '../devstack/devConfig';
import { ensureNamespace } from '../devstack/namespace';
import { stopProcess } from '../devstack/processes';
import { startProcess, waitForHttp, type DipperProcess } from '../devstack/dipperProcess';
import { clientTlsEnv, ensureCerts } from './certs';
import { tlsFromEnv } from '../temporal/tls';
import { createDatabase, ensureServerTools, prepareDatabases, startServer, writeServerConfig, type Postgres } from './temporalServer';

/** What `dipper cluster` started, recorded in `<dir>/cluster.json` for tests and people. */
export interface ClusterRecord {
  /** The load balancer: the one URL agents and operators use. */
  url: string;
  temporalAddress: string;
  /** The files a Temporal client needs (TEMPORAL_TLS_*): the server takes no connection without them. */
  temporalTls: Record<string, string>;
  /** The frontend's HTTP API (the same TLS). */
  temporalHttpAddress: string;
  operatorToken: string;
  databaseUrl: string;
  /** Each Dipper process: how to find it, and the environment to start it again with. */
  processes: { name: string; role: 'worker' | 'gateway' | 'taskservice'; pid: number; env: Record<string, string>; log: string; url?: string; dataDir?: string }[];
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
}

export interface Cluster {
  record: ClusterRecord;
  stop(): Promise<void>;
}

const DBS = { main: 'dipper_cluster_temporal', visibility: 'dipper_cluster_visibility' };
/** Dipper's own tables (events, long texts, wakes). */
const DIPPER_DB = 'dipper_cluster';

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
    log('preparing the Temporal databases');
    prepareDatabases(tools, pg, DBS, opts.fresh);
    createDatabase(tools, pg, DIPPER_DB, opts.fresh);
    const frontend = opts.basePort;
    const certs = ensureCerts(path.join(dir, 'certs'));
    const tlsEnv = clientTlsEnv(certs);
    writeServerConfig(opts.projectRoot, path.join(dir, 'temporal'), pg, DBS, { frontend, base: opts.basePort + 1 }, certs);
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
    const url = `http://127.0.0.1:${lbPort}`;
    const databaseUrl = `postgres://${encodeURIComponent(pg.user)}:${encodeURIComponent(pg.password)}@${pg.host}:${pg.port}/${DIPPER_DB}`;
    const operatorToken = `dpo_cluster_${crypto.randomBytes(12).toString('hex')}`;
    // One Task service for the whole cluster, as docker-compose.yml's `tasks`: every worker and gateway reach the same one.
    const tasksPort = opts.basePort + 30;
    const common: Record<string, string> = {
      DIPPER_TASK_API_URL: `http://127.0.0.1:${tasksPort}`,
      DIPPER_TASK_ADMIN_KEY: `dtk_cluster_${crypto.randomBytes(12).toString('hex')}`,
      TEMPORAL_ADDRESS: temporalAddress,
      ...tlsEnv,
      TEMPORAL_NAMESPACE: devConfig.namespace,
      DIPPER_DATABASE_URL: databaseUrl,
      DIPPER_PUBLIC_URL: url,
      // HAProxy reaches the gateways from loopback and names each client (deploy/haproxy.cfg).
      DIPPER_TRUSTED_PROXIES: '127.0.0.1',
      DIPPER_OPERATOR_TOKEN: operatorToken,
      DIPPER_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
      DIPPER_WORKFLOW_BUNDLE: bundle,
      DIPPER_LOG_LEVEL: 'warn',
      ...opts.extraEnv,
    };
    const processes: ClusterRecord['processes'] = [];
    const run = (name: string, role: 'worker' | 'gateway' | 'taskservice', env: Record<string, string>, extra: { url?: string; dataDir?: string }): DipperProcess => {
      const logFile = path.join(dir, `${name}.log`);
      const p = startProcess(role, env, logFile);
      started.push(() => p.kill());
      processes.push({ name, role, pid: p.proc.pid!, env, log: logFile, ...extra });
      return p;
    };
    run('tasks', 'taskservice', { ...common, DIPPER_TASK_SERVICE_PORT: String(tasksPort), DIPPER_TASK_SERVICE_DB: path.join(dir, 'tasks', 'tasks.db') }, {});
    await waitForHttp(`http://127.0.0.1:${tasksPort}/healthz`, 60_000);
    for (const host of ['host-a', 'host-b']) {
      const dataDir = path.join(dir, host);
      run(`worker-${host}`, 'worker', { ...common, DIPPER_HOST_ID: host, DIPPER_DATA_DIR: dataDir }, { dataDir });
    }
    const gatewayUrls: string[] = [];
    for (const n of [1, 2]) {
      const port = opts.basePort + 20 + n;
      const gatewayUrl = `http://127.0.0.1:${port}`;
      gatewayUrls.push(gatewayUrl);
      run(`gateway-${n}`, 'gateway', { ...common, DIPPER_PORT: String(port), DIPPER_DATA_DIR: path.join(dir, `gateway-${n}`) }, { url: gatewayUrl });
    }
    for (const g of gatewayUrls) await waitForHttp(`${g}/healthz`, 60_000);

    log(`starting HAProxy on ${lbPort}`);
    const lb = startHaproxy(opts.projectRoot, dir, lbPort, gatewayUrls);
    started.push(() => stopProcess(lb, 5000));
    await waitForHttp(`${url}/healthz`, 30_000);

    const record: ClusterRecord = { url, temporalAddress, temporalTls: tlsEnv, temporalHttpAddress: `127.0.0.1:${opts.basePort + 1}`, operatorToken, databaseUrl, processes, pids: { temporal: server.pid!, lb: lb.pid! } };
    fs.writeFileSync(path.join(dir, 'cluster.json'), JSON.stringify(record, null, 2), { mode: 0o600 });
    return { record, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function startHaproxy(projectRoot: string, dir: string, port: number, gateways: string[]): ChildProcess {
  const out = fs.openSync(path.join(dir, 'haproxy.log'), 'a');
  const proc = spawn('haproxy', ['-db', '-f', path.join(projectRoot, 'deploy', 'haproxy.cfg')], {
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      DIPPER_LB_BIND: `127.0.0.1:${port}`,
      DIPPER_GATEWAY_1: new URL(gateways[0]).host,
      DIPPER_GATEWAY_2: new URL(gateways[1]).host,
    },
  });
  fs.closeSync(out);
  // A spawn that fails (the binary went away) is reported by the health wait, not by an unhandled error.
  proc.on('error', () => undefined);
  return proc;
}
