import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { SERVER_VERSION } from '../common/version';
import { copyFile, copyTree, type SkippedFile } from './backupFiles';
import type { BackupKey } from './backupKey';
import { checkBackup, listEntries, putBack, writeSignedManifest, type BackupEntries, type Signature } from './backupManifest';

/**
 * A backup of an embedded stack's data folder, taken while it runs:
 * every SQLite file (Temporal's, the event log, long texts, the audit
 * chain, the task board) copied with SQLite's online backup, which reads
 * one consistent snapshot of each while its writers go on; the secrets;
 * the runs' folders; and the audit witness, copied before the audit chain
 * so the chain restored is never behind the head it vouches for. Every
 * entry is listed in a manifest signed with the backup key (backupKey.ts),
 * which lives outside the data folder.
 */
export interface BackupManifest extends BackupEntries {
  format: 'dipper-backup-2';
  created_at: string;
  dipper_version: string;
  data_dir: string;
  /** Where the witness was, and its copy in the backup (`witness.json`); null when none is configured. */
  witness: { file: string } | null;
  /** Files of the runs' folders left out (over the size limit, unreadable, gone or swapped meanwhile), relative to the data folder. */
  skipped: SkippedFile[];
  signature: Signature;
}

/** Never copied: the running stack's own record (pids, ports) and SQLite's side files, which the online backup folds in. */
const SKIPPED = new Set(['stack.json']);
const SIDE_FILE = /-(wal|shm|journal)$/;
/** The default per-file limit: a workspace file larger than this is left out, named, unless the operator says otherwise. */
export const DEFAULT_MAX_FILE_BYTES = 1024 ** 3;

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

/**
 * Empties a backup folder that did not finish (or removes it, if the backup
 * made it), so no half-written copy stays behind looking like a backup.
 * Says what it could not remove; a folder without a signed manifest is
 * refused by restore either way.
 */
export function discardPartial(to: string, made: boolean): string {
  try {
    if (made) fs.rmSync(to, { recursive: true, force: true });
    else for (const name of fs.readdirSync(to)) fs.rmSync(path.join(to, name), { recursive: true, force: true });
    return `the partial backup in ${to} was removed`;
  } catch {
    return `the partial backup in ${to} could not be removed (restore refuses it: it has no manifest)`;
  }
}

export async function backup(o: { dataDir: string; to: string; witness?: string; key: BackupKey; maxFileBytes?: number; log?: (line: string) => void }): Promise<BackupManifest> {
  const dataDir = path.resolve(o.dataDir);
  const to = path.resolve(o.to);
  if (!fs.existsSync(dataDir)) throw new Error(`no data folder at ${dataDir}`);
  if (!emptyOrMissing(to)) throw new Error(`${to} is not empty: a backup goes into a new folder`);
  const rel = path.relative(dataDir, to);
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) throw new Error('the backup folder must be outside the data folder');
  const made = !fs.existsSync(to);
  const log = o.log ?? (() => undefined);
  let step = 'copying the data folder';
  try {
    fs.mkdirSync(to, { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(to, 'data'), { mode: 0o700 });

    // First: the witness may only be behind the chain it is restored with, never ahead of it.
    let witness: BackupManifest['witness'] = null;
    if (o.witness && fs.existsSync(o.witness)) {
      step = 'copying the audit witness';
      copyFile(o.witness, path.join(to, 'witness.json'), {});
      witness = { file: path.resolve(o.witness) };
    }
    step = 'copying the data folder';
    const databases: string[] = [];
    const skipped = copyTree(dataDir, path.join(to, 'data'), {
      maxFileBytes: o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      skip: (name) => SKIPPED.has(name) || SIDE_FILE.test(name),
      take: (name) => !name.includes(path.sep) && isSqlite(path.join(dataDir, name)) && databases.push(name) > 0,
      log,
    });
    // The audit chain last of the databases: the witness copied above vouches for a head it then surely has.
    databases.sort((a, b) => Number(a === 'audit.db') - Number(b === 'audit.db'));
    for (const name of databases) {
      step = `copying ${name}`;
      const db = new Database(path.join(dataDir, name), { readonly: true, fileMustExist: true });
      try {
        db.pragma('busy_timeout = 10000');
        await db.backup(path.join(to, 'data', name));
      } finally {
        db.close();
      }
      log(`copied ${name} (online backup)`);
    }
    step = 'writing the manifest';
    const body = { format: 'dipper-backup-2' as const, created_at: new Date().toISOString(), dipper_version: SERVER_VERSION, data_dir: dataDir, witness, skipped, ...listEntries(to) };
    return writeSignedManifest(to, body, o.key);
  } catch (err) {
    throw new Error(`the backup failed while ${step}: ${err instanceof Error ? err.message : String(err)}; ${discardPartial(to, made)}`);
  }
}

/**
 * Puts a backup back into an empty data folder (and its witness where the
 * configuration says), after checking the manifest's signature and every
 * entry of the backup folder against it: nothing is written unless all
 * holds. The stack must not run on that folder; start it afterwards, and
 * the runs go on from the moment of the backup.
 */
export function restore(o: { from: string; dataDir: string; witness?: string; key: BackupKey; log?: (line: string) => void }): BackupManifest {
  const from = path.resolve(o.from);
  const dataDir = path.resolve(o.dataDir);
  if (!emptyOrMissing(dataDir)) throw new Error(`${dataDir} is not empty: restore into an empty data folder (move the old one aside first)`);
  const manifest = checkBackup<BackupManifest>(from, 'dipper-backup-2', o.key);
  const hasWitness = manifest.files.some((f) => f.path === 'witness.json');
  if (hasWitness && o.witness && fs.existsSync(o.witness)) {
    throw new Error(`the audit witness ${o.witness} exists: a restore winds the chain back to the backup, so move the newer witness aside deliberately first`);
  }
  const count = putBack(from, manifest, 'data', dataDir);
  if (hasWitness && o.witness) {
    fs.mkdirSync(path.dirname(o.witness), { recursive: true });
    const copied = copyFile(path.join(from, 'witness.json'), o.witness, { mode: 0o600 });
    if (copied.sha256 !== manifest.files.find((f) => f.path === 'witness.json')!.sha256) {
      fs.rmSync(o.witness);
      throw new Error('witness.json changed while it was restored: the witness was not written');
    }
  }
  for (const s of manifest.skipped) o.log?.(`not in the backup: ${JSON.stringify(s.path)} (${s.reason})`);
  o.log?.(`restored ${count} files from the backup of ${manifest.created_at}`);
  return manifest;
}
