import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SERVER_VERSION } from '../common/version';

/**
 * A backup of an embedded stack's data folder, taken while it runs:
 * every SQLite file (Temporal's, the event log, long texts, the audit
 * chain, the task board) copied with SQLite's online backup, which reads
 * one consistent snapshot of each while its writers go on; the secrets;
 * the runs' folders; and the audit witness, copied before the audit chain
 * so the chain restored is never behind the head it vouches for.
 */
export interface BackupManifest {
  format: 'dipper-backup-1';
  created_at: string;
  dipper_version: string;
  data_dir: string;
  /** Relative to the backup folder, with their sizes and SHA-256 (restore checks them). */
  files: { path: string; bytes: number; sha256: string }[];
  /** Where the witness was, and its copy in the backup (`witness.json`); null when none is configured. */
  witness: { file: string } | null;
}

/** Never copied: the running stack's own record (pids, ports) and SQLite's side files, which the online backup folds in. */
const SKIPPED = new Set(['stack.json']);
const SIDE_FILE = /-(wal|shm|journal)$/;

function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function isSqlite(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(16);
    return fs.readSync(fd, head, 0, 16, 0) === 16 && head.toString('latin1') === 'SQLite format 3\u0000';
  } finally {
    fs.closeSync(fd);
  }
}

function emptyOrMissing(dir: string): boolean {
  return !fs.existsSync(dir) || fs.readdirSync(dir).length === 0;
}

export async function backup(o: { dataDir: string; to: string; witness?: string; log?: (line: string) => void }): Promise<BackupManifest> {
  const dataDir = path.resolve(o.dataDir);
  const to = path.resolve(o.to);
  if (!fs.existsSync(dataDir)) throw new Error(`no data folder at ${dataDir}`);
  if (!emptyOrMissing(to)) throw new Error(`${to} is not empty: a backup goes into a new folder`);
  const rel = path.relative(dataDir, to);
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) throw new Error('the backup folder must be outside the data folder');
  fs.mkdirSync(path.join(to, 'data'), { recursive: true, mode: 0o700 });
  const log = o.log ?? (() => undefined);

  // First: the witness may only be behind the chain it is restored with, never ahead of it.
  let witness: BackupManifest['witness'] = null;
  if (o.witness && fs.existsSync(o.witness)) {
    fs.copyFileSync(o.witness, path.join(to, 'witness.json'));
    witness = { file: path.resolve(o.witness) };
  }
  const databases: string[] = [];
  const copyTree = (from: string, into: string) => {
    for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
      const src = path.join(from, entry.name);
      const dest = path.join(into, entry.name);
      const relative = path.relative(dataDir, src);
      if (SKIPPED.has(relative) || SIDE_FILE.test(entry.name)) continue;
      if (entry.isDirectory()) {
        fs.mkdirSync(dest, { recursive: true, mode: 0o700 });
        copyTree(src, dest);
      } else if (entry.isFile()) {
        if (from === dataDir && isSqlite(src)) databases.push(relative);
        else fs.copyFileSync(src, dest);
      } else if (entry.isSymbolicLink()) {
        fs.symlinkSync(fs.readlinkSync(src), dest);
      }
      // Sockets and pipes (a runtime's) are not data.
    }
  };
  copyTree(dataDir, path.join(to, 'data'));
  // The audit chain last of the databases: the witness copied above vouches for a head it then surely has.
  databases.sort((a, b) => Number(a === 'audit.db') - Number(b === 'audit.db'));
  for (const name of databases) {
    const db = new Database(path.join(dataDir, name), { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 10000');
      await db.backup(path.join(to, 'data', name));
    } finally {
      db.close();
    }
    log(`copied ${name} (online backup)`);
  }
  const files: BackupManifest['files'] = [];
  const list = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) list(full);
      else if (entry.isFile()) files.push({ path: path.relative(to, full), bytes: fs.statSync(full).size, sha256: sha256(full) });
    }
  };
  list(to);
  const manifest: BackupManifest = { format: 'dipper-backup-1', created_at: new Date().toISOString(), dipper_version: SERVER_VERSION, data_dir: dataDir, files, witness };
  fs.writeFileSync(path.join(to, 'manifest.json'), JSON.stringify(manifest, null, 2), { mode: 0o600 });
  return manifest;
}

/**
 * Puts a backup back into an empty data folder (and its witness where the
 * configuration says), after checking every file against the manifest.
 * The stack must not run on that folder; start it afterwards, and the runs
 * go on from the moment of the backup.
 */
export function restore(o: { from: string; dataDir: string; witness?: string; log?: (line: string) => void }): BackupManifest {
  const from = path.resolve(o.from);
  const dataDir = path.resolve(o.dataDir);
  const manifest = JSON.parse(fs.readFileSync(path.join(from, 'manifest.json'), 'utf8')) as BackupManifest;
  if (manifest.format !== 'dipper-backup-1') throw new Error(`${from} is not a Dipper backup (format ${String(manifest.format)})`);
  if (!emptyOrMissing(dataDir)) throw new Error(`${dataDir} is not empty: restore into an empty data folder (move the old one aside first)`);
  for (const f of manifest.files) {
    const file = path.join(from, f.path);
    if (!fs.existsSync(file) || sha256(file) !== f.sha256) throw new Error(`${f.path} in the backup is missing or changed since it was taken`);
  }
  if (manifest.witness && o.witness && fs.existsSync(o.witness)) {
    throw new Error(`the audit witness ${o.witness} exists: a restore winds the chain back to the backup, so move the newer witness aside deliberately first`);
  }
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.cpSync(path.join(from, 'data'), dataDir, { recursive: true, verbatimSymlinks: true });
  if (manifest.witness && o.witness) {
    fs.mkdirSync(path.dirname(o.witness), { recursive: true });
    fs.copyFileSync(path.join(from, 'witness.json'), o.witness);
  }
  o.log?.(`restored ${manifest.files.length} files from the backup of ${manifest.created_at}`);
  return manifest;
}
