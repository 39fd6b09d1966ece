import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_MAX_FILE_BYTES, discardPartial } from '../ops/backup';
import { copyTree, type SkippedFile } from '../ops/backupFiles';
import type { BackupKey } from '../ops/backupKey';
import { checkBackup, listEntries, putBack, writeSignedManifest, type BackupEntries, type Signature } from '../ops/backupManifest';
import type { Postgres } from './temporalServer';

/**
 * A backup of a cluster made by `dipper cluster`, taken while it runs:
 * each of its three PostgreSQL databases (Temporal's, its visibility,
 * Dipper's events, long texts and audit chain) with `pg_dump` (one
 * consistent snapshot of each), the Task service's SQLite file with
 * SQLite's online backup, and its folder's files that are state: the
 * secrets and each host's folder. Logs, the generated server configuration
 * and the workflow bundle are made again at start, and so are the
 * certificates: the CA's private key never leaves the cluster's folder
 * (certs.ts makes a new CA and certificates when they are missing). Every
 * entry is listed, hashed, in a manifest signed with the backup key.
 */
export interface ClusterBackupManifest extends BackupEntries {
  format: 'dipper-cluster-backup-2';
  created_at: string;
  databases: Record<'main' | 'visibility' | 'dipper', string>;
  /** The dumps' file names, at the top of the backup folder. */
  dumps: string[];
  /** What of the cluster's folder is in `files/`. */
  kept: string[];
  /** Files of the hosts' folders left out (over the size limit, unreadable, gone or swapped meanwhile). */
  skipped: SkippedFile[];
  signature: Signature;
}

const FORMAT = 'dipper-cluster-backup-2' as const;
/** What of a cluster's folder is state (the rest, certificates included, is made again at start). */
const KEPT = new Set(['secrets.json', 'host-a', 'host-b']);
const TASKS_DB = path.join('tasks', 'tasks.db');
const NOT_STATE = /\.log$|-(wal|shm)$|\.sock$/;

const pgEnv = (pg: Postgres) => ({ ...process.env, PGHOST: pg.host, PGPORT: String(pg.port), PGUSER: pg.user, PGPASSWORD: pg.password });

/** The state of the cluster's folder into `<to>/files`: the secrets, the hosts' folders (agents write there: see copyTree) and the Task service's database. */
export async function copyClusterFiles(dir: string, to: string, o: { maxFileBytes: number; log: (line: string) => void }): Promise<{ kept: string[]; skipped: SkippedFile[] }> {
  const into = path.join(to, 'files');
  fs.mkdirSync(into, { recursive: true, mode: 0o700 });
  const kept = fs.readdirSync(dir).filter((name) => KEPT.has(name)).sort();
  const skipped = copyTree(dir, into, { maxFileBytes: o.maxFileBytes, skip: (name) => !KEPT.has(name.split(path.sep)[0]) || NOT_STATE.test(name), log: o.log });
  const tasks = path.join(dir, TASKS_DB);
  if (fs.existsSync(tasks)) {
    fs.mkdirSync(path.join(into, 'tasks'), { mode: 0o700 });
    const db = new Database(tasks, { readonly: true, fileMustExist: true });
    try {
      await db.backup(path.join(into, TASKS_DB));
    } finally {
      db.close();
    }
    kept.push(TASKS_DB);
  }
  return { kept, skipped };
}

export async function backupCluster(o: {
  dir: string;
  pg: Postgres;
  databases: ClusterBackupManifest['databases'];
  to: string;
  key: BackupKey;
  maxFileBytes?: number;
  log?: (line: string) => void;
}): Promise<ClusterBackupManifest> {
  const to = path.resolve(o.to);
  if (fs.existsSync(to) && fs.readdirSync(to).length > 0) throw new Error(`${to} is not empty: a backup goes into a new folder`);
  const made = !fs.existsSync(to);
  const log = o.log ?? (() => undefined);
  let step = 'making the backup folder';
  try {
    fs.mkdirSync(to, { recursive: true, mode: 0o700 });
    const dumps: string[] = [];
    for (const db of Object.values(o.databases)) {
      step = `dumping ${db}`;
      const file = `${db}.dump`;
      execFileSync('pg_dump', ['--format=custom', '--no-owner', '--dbname', db, '--file', path.join(to, file)], { env: pgEnv(o.pg), stdio: ['ignore', 'ignore', 'pipe'] });
      dumps.push(file);
      log(`dumped ${db}`);
    }
    step = "copying the cluster's folder";
    const { kept, skipped } = await copyClusterFiles(o.dir, to, { maxFileBytes: o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES, log });
    step = 'writing the manifest';
    return sealClusterBackup(to, { databases: o.databases, dumps, kept, skipped }, o.key);
  } catch (err) {
    throw new Error(`the cluster backup failed while ${step}: ${err instanceof Error ? err.message : String(err)}; ${discardPartial(to, made)}`);
  }
}

/** Lists and hashes every entry of a finished cluster backup folder and signs the whole as its manifest. */
export function sealClusterBackup(to: string, made: Pick<ClusterBackupManifest, 'databases' | 'dumps' | 'kept' | 'skipped'>, key: BackupKey): ClusterBackupManifest {
  return writeSignedManifest(to, { format: FORMAT, created_at: new Date().toISOString(), ...made, ...listEntries(to) }, key);
}

/** The manifest of a cluster backup, once its signature and every entry hold, and each dump it names is one of its files. */
export function checkClusterBackup(from: string, key: BackupKey): ClusterBackupManifest {
  const manifest = checkBackup<ClusterBackupManifest>(from, FORMAT, key);
  const files = new Set(manifest.files.map((f) => f.path));
  const databases = Object.values(manifest.databases ?? {});
  for (const db of databases) {
    if (typeof db !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(db) || !files.has(`${db}.dump`)) throw new Error(`${from}: the manifest names a database ${JSON.stringify(db)} without its dump`);
  }
  return manifest;
}

/**
 * Puts a backup back, once checkClusterBackup holds (nothing is dropped or
 * written before): each database dropped and made again from its dump, the
 * files into the cluster's folder, which must be empty (move the old one
 * aside: the hosts' folders are named in the runs' state, so a restore goes
 * to the same path). Start the cluster afterwards (`cluster up`): it makes a
 * new CA and certificates, and its runs go on from the backup.
 */
export function restoreCluster(o: { from: string; dir: string; pg: Postgres; key: BackupKey; log?: (line: string) => void }): ClusterBackupManifest {
  const from = path.resolve(o.from);
  if (fs.existsSync(o.dir) && fs.readdirSync(o.dir).length > 0) throw new Error(`${o.dir} is not empty: restore into an empty folder (move the old one aside first)`);
  const manifest = checkClusterBackup(from, o.key);
  const env = pgEnv(o.pg);
  for (const db of Object.values(manifest.databases)) {
    execFileSync('dropdb', ['--if-exists', db], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('createdb', [db], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', db, path.join(from, `${db}.dump`)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    o.log?.(`restored ${db}`);
  }
  putBack(from, manifest, 'files', o.dir);
  for (const s of manifest.skipped) o.log?.(`not in the backup: ${JSON.stringify(s.path)} (${s.reason})`);
  o.log?.('certificates are not in backups (the CA key never leaves the cluster): `cluster up` makes a new CA and certificates at its first start');
  return manifest;
}
