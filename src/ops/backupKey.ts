import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The key that signs backup manifests (HMAC-SHA256). It lives outside the
 * data folder on purpose: whoever can write the data folder, or a copy of
 * it, must not also hold what vouches for the copy. Its default place is
 * the operator's own configuration, so `npm start` users need no setting.
 */
export interface BackupKey {
  file: string;
  secret: Buffer;
  /** Names the key in a manifest without giving it away, so a restore can say "signed with another key". */
  id: string;
}

/** DIPPER_BACKUP_KEY_FILE, else `$XDG_CONFIG_HOME/dipper/backup.key`, else `~/.config/dipper/backup.key`. */
export function backupKeyFile(env: NodeJS.ProcessEnv, home = os.homedir()): string {
  if (env.DIPPER_BACKUP_KEY_FILE) return path.resolve(env.DIPPER_BACKUP_KEY_FILE);
  return path.join(env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(home, '.config'), 'dipper', 'backup.key');
}

const keyId = (secret: Buffer) => crypto.createHmac('sha256', secret).update('dipper backup key id').digest('hex').slice(0, 16);

function inside(file: string, folder: string): boolean {
  const rel = path.relative(path.resolve(folder), file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Reads the key; with `create`, makes one (32 random bytes, hex, mode 0600
 * in a 0700 folder) when there is none. Refuses a key inside any of the
 * `notIn` folders (the data folder, the backup folder).
 */
export function loadBackupKey(file: string, o: { create: boolean; notIn: string[]; log?: (line: string) => void }): BackupKey {
  for (const folder of o.notIn) {
    if (inside(file, folder)) throw new Error(`the backup key ${file} is inside ${folder}: it must live apart from what it vouches for (set DIPPER_BACKUP_KEY_FILE)`);
  }
  if (!fs.existsSync(file)) {
    if (!o.create) throw new Error(`no backup key at ${file}: a backup is restored only with the key that signed it (DIPPER_BACKUP_KEY_FILE names it)`);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // 'wx': two backups started at once never overwrite each other's new key.
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    o.log?.(`made a new backup key at ${file}: keep a copy of it apart from the backups, a restore needs it`);
  }
  const text = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} is not a backup key (64 hexadecimal characters)`);
  const secret = Buffer.from(text, 'hex');
  return { file, secret, id: keyId(secret) };
}
