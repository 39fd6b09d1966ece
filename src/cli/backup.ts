import { backup, DEFAULT_MAX_FILE_BYTES, restore } from '../ops/backup';
import { byteCount } from '../ops/backupFiles';
import { backupKeyFile, loadBackupKey, type BackupKey } from '../ops/backupKey';
import { loadStackConfig } from './stackRecord';

const log = (line: string) => process.stderr.write(`dipper: ${line}\n`);
const UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** "1073741824", "512M", "1G": a byte count; anything else is refused naming where it came from. */
export function parseByteCount(text: string, where: string): number {
  const m = /^(\d+)([KMGT]?)i?B?$/i.exec(text.trim());
  const n = m ? Number(m[1]) * UNITS[m[2].toUpperCase()] : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${where}: expected a number of bytes above 0, such as 1073741824 or 1G (got ${JSON.stringify(text)})`);
  return n;
}

/** The per-file limit for folders agents write: --max-file-bytes, else DIPPER_BACKUP_MAX_FILE_BYTES, else 1 GiB. */
export function maxFileBytes(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (flag !== undefined) return parseByteCount(flag, '--max-file-bytes');
  if (env.DIPPER_BACKUP_MAX_FILE_BYTES) return parseByteCount(env.DIPPER_BACKUP_MAX_FILE_BYTES, 'DIPPER_BACKUP_MAX_FILE_BYTES');
  return DEFAULT_MAX_FILE_BYTES;
}

/** The signing key: made on a first backup, required as it is by a restore; never inside the folders it vouches for. */
export function backupKey(o: { create: boolean; notIn: string[] }): BackupKey {
  return loadBackupKey(backupKeyFile(process.env), { ...o, log });
}

/** `dipper backup <folder>` */
export async function backupCommand(folder: string, opts: { maxFileBytes?: string }): Promise<number> {
  const config = loadStackConfig();
  const limit = maxFileBytes(opts.maxFileBytes);
  const key = backupKey({ create: true, notIn: [config.dataDir, folder] });
  const manifest = await backup({ dataDir: config.dataDir, to: folder, witness: config.isphere.auditWitness, key, maxFileBytes: limit, log });
  const bytes = manifest.files.reduce((n, f) => n + f.bytes, 0);
  const left = manifest.skipped.length > 0 ? `; left out ${manifest.skipped.length} files of the runs' folders (named above; limit ${byteCount(limit)} per file)` : '';
  process.stdout.write(`backed up ${manifest.files.length} files (${byteCount(bytes)}) into ${folder}, signed with ${key.file}${left}\n`);
  return 0;
}

/** `dipper restore <folder>` */
export function restoreCommand(folder: string): number {
  const config = loadStackConfig();
  restore({ from: folder, dataDir: config.dataDir, witness: config.isphere.auditWitness, key: backupKey({ create: false, notIn: [config.dataDir, folder] }), log });
  process.stdout.write(`restored into ${config.dataDir}\n`);
  return 0;
}
