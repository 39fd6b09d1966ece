import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Postgres } from './temporalServer';

/**
 * A backup of a cluster made by `dipper cluster`, taken while it runs:
 * each of its three PostgreSQL databases (Temporal's, its visibility,
 * Dipper's events, long texts and audit chain) with `pg_dump` (one
 * consistent snapshot of each), the Task service's SQLite file with
 * SQLite's online backup, and its folder's files that are state: the
 * secrets, the certificates and each host's folder. Logs, the generated
 * server configuration and the workflow bundle are made again at start.
 */
export interface ClusterBackupManifest {
  format: 'dipper-cluster-backup-1';
  created_at: string;
  databases: Record<'main' | 'visibility' | 'dipper', string>;
  dumps: string[];
  files: string[];
}

/** What of a cluster's folder is state (the rest is made again at start). */
const KEPT = ['secrets.json', 'certs', 'host-a', 'host-b'];
const TASKS_DB = path.join('tasks', 'tasks.db');

const pgEnv = (pg: Postgres) => ({ ...process.env, PGHOST: pg.host, PGPORT: String(pg.port), PGUSER: pg.user, PGPASSWORD: pg.password });

export async function backupCluster(o: { dir: string; pg: Postgres; databases: ClusterBackupManifest['databases']; to: string; log?: (line: string) => void }): Promise<ClusterBackupManifest> {
  const to = path.resolve(o.to);
  if (fs.existsSync(to) && fs.readdirSync(to).length > 0) throw new Error(`${to} is not empty: a backup goes into a new folder`);
  fs.mkdirSync(path.join(to, 'files', 'tasks'), { recursive: true, mode: 0o700 });
  const dumps: string[] = [];
  for (const db of Object.values(o.databases)) {
    const file = `${db}.dump`;
    execFileSync('pg_dump', ['--format=custom', '--no-owner', '--dbname', db, '--file', path.join(to, file)], { env: pgEnv(o.pg), stdio: ['ignore', 'ignore', 'pipe'] });
    dumps.push(file);
    o.log?.(`dumped ${db}`);
  }
  const files: string[] = [];
  for (const name of KEPT) {
    const src = path.join(o.dir, name);
    if (!fs.existsSync(src)) continue;
    fs.cpSync(src, path.join(to, 'files', name), { recursive: true, verbatimSymlinks: true, filter: (p) => !/\.log$|-(wal|shm)$|\.sock$/.test(p) });
    files.push(name);
  }
  const tasks = path.join(o.dir, TASKS_DB);
  if (fs.existsSync(tasks)) {
    const db = new Database(tasks, { readonly: true, fileMustExist: true });
    try {
      await db.backup(path.join(to, 'files', TASKS_DB));
    } finally {
      db.close();
    }
    files.push(TASKS_DB);
  }
  const manifest: ClusterBackupManifest = { format: 'dipper-cluster-backup-1', created_at: new Date().toISOString(), databases: o.databases, dumps, files };
  fs.writeFileSync(path.join(to, 'manifest.json'), JSON.stringify(manifest, null, 2), { mode: 0o600 });
  return manifest;
}

/**
 * Puts a backup back: each database dropped and made again from its dump,
 * the files into the cluster's folder, which must be empty (move the old
 * one aside: the hosts' folders are named in the runs' state, so a restore
 * goes to the same path). Start the cluster afterwards (`cluster up`), and
 * its runs go on from the backup.
 */
export function restoreCluster(o: { from: string; dir: string; pg: Postgres; log?: (line: string) => void }): ClusterBackupManifest {
  const from = path.resolve(o.from);
  const manifest = JSON.parse(fs.readFileSync(path.join(from, 'manifest.json'), 'utf8')) as ClusterBackupManifest;
  if (manifest.format !== 'dipper-cluster-backup-1') throw new Error(`${from} is not a Dipper cluster backup`);
  if (fs.existsSync(o.dir) && fs.readdirSync(o.dir).length > 0) throw new Error(`${o.dir} is not empty: restore into an empty folder (move the old one aside first)`);
  const env = pgEnv(o.pg);
  for (const db of Object.values(manifest.databases)) {
    execFileSync('dropdb', ['--if-exists', db], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('createdb', [db], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', db, path.join(from, `${db}.dump`)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    o.log?.(`restored ${db}`);
  }
  fs.mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  fs.cpSync(path.join(from, 'files'), o.dir, { recursive: true, verbatimSymlinks: true });
  return manifest;
}
