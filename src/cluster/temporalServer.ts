import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TemporalAdmin } from '../temporal';
import type { TemporalTarget } from '../temporal/tls';
import type { ClusterCerts } from './certs';
import { TEMPORAL_SERVER_VERSION } from '../common/version';

const MODULE = 'go.temporal.io/server';

export interface ServerTools {
  server: string;
  sqlTool: string;
  /** The module's PostgreSQL schemas (schema/postgresql/v12). */
  schemaDir: string;
}

function goEnv(name: string): string {
  return execFileSync('go', ['env', name], { encoding: 'utf8' }).trim();
}

/**
 * The server and temporal-sql-tool binaries, built with `go install` when
 * missing (a few minutes on two cores; the Go module proxy must be
 * reachable), and the schema folder from the module cache.
 */
export function ensureServerTools(log: (line: string) => void): ServerTools {
  const bin = goEnv('GOBIN') || path.join(goEnv('GOPATH').split(path.delimiter)[0], 'bin');
  const schemaDir = path.join(goEnv('GOMODCACHE'), `${MODULE}@${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
  const wanted: [string, string][] = [
    ['server', `${MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`],
    ['sql', `${MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`],
  ];
  for (const [name, pkg] of wanted) {
    const file = path.join(bin, name);
    if (fs.existsSync(file) && execFileSync(file, ['--version'], { encoding: 'utf8' }).includes(TEMPORAL_SERVER_VERSION.slice(1))) continue;
    log(`building ${pkg} (go install; a few minutes the first time)`);
    execFileSync('go', ['install', pkg], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
  if (!fs.existsSync(schemaDir)) throw new Error(`the Temporal schemas are not in the module cache at ${schemaDir}`);
  return { server: path.join(bin, 'server'), sqlTool: path.join(bin, 'sql'), schemaDir };
}

export interface Postgres {
  host: string;
  port: number;
  user: string;
  password: string;
}

/**
 * Creates (or, when `fresh`, recreates) the server's two databases and
 * brings their schemas to the module's newest version, as an operator
 * would with temporal-sql-tool.
 */
export function prepareDatabases(tools: ServerTools, pg: Postgres, dbs: { main: string; visibility: string }, fresh: boolean): void {
  const run = sqlTool(tools, pg);
  for (const [db, schema] of [
    [dbs.main, 'temporal'],
    [dbs.visibility, 'visibility'],
  ] as const) {
    if (fresh) run(db, ['--quiet', 'drop-database', '--force']);
    // Quiet: the database may exist already.
    run(db, ['--quiet', 'create-database']);
    run(db, ['setup-schema', '-v', '0.0']);
    run(db, ['update-schema', '-d', path.join(tools.schemaDir, schema, 'versioned')]);
  }
}

function sqlTool(tools: ServerTools, pg: Postgres): (db: string, args: string[]) => void {
  const base = ['--plugin', 'postgres12', '--ep', pg.host, '-p', String(pg.port), '-u', pg.user, '--pw', pg.password];
  return (db, args) => void execFileSync(tools.sqlTool, [...base, '--db', db, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** An empty database (recreated when `fresh`) for Dipper's own tables, which its processes create at start. */
export function createDatabase(tools: ServerTools, pg: Postgres, name: string, fresh: boolean): void {
  const run = sqlTool(tools, pg);
  if (fresh) run(name, ['--quiet', 'drop-database', '--force']);
  run(name, ['--quiet', 'create-database']);
}

export interface ServerPorts {
  frontend: number;
  base: number;
}

/** The config file the server reads, from temporal-config/cluster/temporal.yaml. */
export function writeServerConfig(projectRoot: string, dir: string, pg: Postgres, dbs: { main: string; visibility: string }, ports: ServerPorts, certs: ClusterCerts): void {
  const p = ports.base;
  const fields: Record<string, string> = {
    TLS_CA: certs.ca,
    TLS_SERVER_CERT: certs.serverCert,
    TLS_SERVER_KEY: certs.serverKey,
    TLS_SERVER_NAME: certs.serverName,
    DB: dbs.main,
    VISIBILITY_DB: dbs.visibility,
    PG_ADDRESS: `${pg.host}:${pg.port}`,
    PG_USER: pg.user,
    PG_PASSWORD: pg.password,
    FRONTEND_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(p),
    HISTORY_PORT: String(p + 1),
    MATCHING_PORT: String(p + 2),
    WORKER_PORT: String(p + 3),
    FRONTEND_MEMBERSHIP_PORT: String(p + 4),
    HISTORY_MEMBERSHIP_PORT: String(p + 5),
    MATCHING_MEMBERSHIP_PORT: String(p + 6),
    WORKER_MEMBERSHIP_PORT: String(p + 7),
    METRICS_PORT: String(p + 8),
    DYNAMIC_CONFIG: path.join(projectRoot, 'temporal-config', 'dynamicconfig', 'production.yaml'),
  };
  const template = fs.readFileSync(path.join(projectRoot, 'temporal-config', 'cluster', 'temporal.yaml'), 'utf8');
  const text = template.replace(/\{\{([A-Z_]+)\}\}/g, (_, name: string) => {
    if (!(name in fields)) throw new Error(`temporal.yaml names an unknown field ${name}`);
    return fields[name];
  });
  fs.mkdirSync(path.join(dir, 'config'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config', 'development.yaml'), text);
}

/** Starts the server and resolves once its frontend answers (over mutual TLS, as every client must). */
export async function startServer(tools: ServerTools, dir: string, frontend: TemporalTarget, logFile: string): Promise<ChildProcess> {
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(tools.server, ['--root', dir, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'], {
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the Temporal server exited during start; see ${logFile}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`the Temporal server did not answer within 120 s; see ${logFile}`);
    }
    try {
      await TemporalAdmin.with(frontend, 2000, (admin) => admin.systemInfo());
      return proc;
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
