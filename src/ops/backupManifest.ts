import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../common/canonicalJson';
import { copyFile, hashFile } from './backupFiles';
import type { BackupKey } from './backupKey';

/**
 * What a backup folder holds, every entry of it, signed with the backup key
 * (HMAC-SHA256 over the manifest's canonical JSON). The embedded stack's and
 * the cluster's backups both carry one; a restore checks the whole folder
 * against it before it writes anything: a bad signature, an entry that is
 * missing, changed or not listed, and the restore is refused, naming it.
 */
export interface BackupEntries {
  /** Every folder, with its mode. */
  dirs: { path: string; mode: number }[];
  /** Every plain file, with its mode, length and SHA-256. */
  files: { path: string; mode: number; bytes: number; sha256: string }[];
  /** Links, kept as links (never followed), with what they point at. */
  links: { path: string; target: string }[];
}

export interface Signature {
  alg: 'hmac-sha256';
  /** Which key signed (not the key): lets a refusal say "another key". */
  key_id: string;
  value: string;
}

export const MANIFEST = 'manifest.json';

/** Every entry of a backup folder but its manifest, hashed a chunk at a time. */
export function listEntries(root: string): BackupEntries {
  const out: BackupEntries = { dirs: [], files: [], links: [] };
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const name = path.join(rel, entry.name);
      const full = path.join(root, name);
      if (name === MANIFEST) continue;
      if (entry.isDirectory()) {
        out.dirs.push({ path: name, mode: fs.lstatSync(full).mode & 0o777 });
        walk(name);
      } else if (entry.isFile()) {
        out.files.push({ path: name, mode: fs.lstatSync(full).mode & 0o777, ...hashFile(full) });
      } else if (entry.isSymbolicLink()) {
        out.links.push({ path: name, target: fs.readlinkSync(full) });
      }
    }
  };
  walk('');
  return out;
}

const mac = (body: object, key: BackupKey) => crypto.createHmac('sha256', key.secret).update(canonicalJson(body)).digest('hex');

/** The manifest with its signature; written last, whole (a rename), so a folder without one is a backup that did not finish. */
export function writeSignedManifest<T extends BackupEntries>(to: string, body: T, key: BackupKey): T & { signature: Signature } {
  const manifest = { ...body, signature: { alg: 'hmac-sha256' as const, key_id: key.id, value: mac(body, key) } };
  const tmp = path.join(to, `.${MANIFEST}.partial`);
  fs.writeFileSync(tmp, JSON.stringify(manifest, null, 2), { mode: 0o600 });
  fs.renameSync(tmp, path.join(to, MANIFEST));
  return manifest;
}

/** A listed path is a plain relative one: nothing absolute, no `..`, nothing to clean up. */
const plainPath = (p: unknown) => typeof p === 'string' && p !== '' && !path.isAbsolute(p) && path.normalize(p) === p && !p.split(path.sep).includes('..');

/**
 * Reads and checks a backup folder: the manifest's format and signature,
 * then every entry on disk against it. Returns the manifest only if all
 * holds; otherwise throws one error naming every problem found.
 */
export function checkBackup<T extends BackupEntries & { format: string }>(from: string, format: string, key: BackupKey): T {
  let manifest: T & { signature?: Signature };
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(from, MANIFEST), 'utf8')) as T & { signature?: Signature };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${from} has no ${MANIFEST}: not a finished Dipper backup (one that failed or was stopped midway has none)`);
    }
    throw new Error(`${from}/${MANIFEST} is not readable JSON`);
  }
  if (manifest?.format !== format) throw new Error(`${from} is not a Dipper backup of this kind (format ${JSON.stringify(manifest?.format)}, expected ${format}; older formats were unsigned and are refused)`);
  const { signature, ...body } = manifest;
  if (signature?.alg !== 'hmac-sha256' || typeof signature.value !== 'string') throw new Error(`${from}/${MANIFEST} is not signed: refused`);
  const expected = Buffer.from(mac(body, key), 'hex');
  const given = Buffer.from(signature.value, 'hex');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    const other = signature.key_id !== key.id ? ` (it names key ${String(signature.key_id)}; ${key.file} is key ${key.id})` : '';
    throw new Error(`${from}/${MANIFEST}: the signature does not match the backup key ${key.file}${other}: the manifest was changed, or signed with another key. Refused; nothing was written`);
  }

  const problems: string[] = [];
  const listed = new Map<string, 'dir' | 'file' | 'link'>();
  for (const [kind, list] of [['dir', body.dirs], ['file', body.files], ['link', body.links]] as const) {
    for (const e of list ?? []) {
      if (!plainPath(e.path)) problems.push(`${JSON.stringify(e.path)} is not a plain relative path`);
      else listed.set(e.path, kind);
    }
  }
  if (problems.length === 0) {
    const onDisk = listEntries(from);
    const kinds = new Map<string, string>([...onDisk.dirs.map((e) => [e.path, 'dir'] as const), ...onDisk.files.map((e) => [e.path, 'file'] as const), ...onDisk.links.map((e) => [e.path, 'link'] as const)]);
    for (const [p, kind] of kinds) if (listed.get(p) !== kind) problems.push(`${JSON.stringify(p)} is not in the manifest${listed.has(p) ? ` as a ${kind}` : ''}`);
    // Anything there but not a folder, file or link (a pipe, a socket) is not in the manifest either.
    const all = (rel: string): string[] => fs.readdirSync(path.join(from, rel), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? all(path.join(rel, d.name)) : [path.join(rel, d.name)]));
    for (const p of all('')) if (p !== MANIFEST && !kinds.has(p)) problems.push(`${JSON.stringify(p)} is not in the manifest`);
    for (const [p, kind] of listed) if (!kinds.has(p)) problems.push(`${JSON.stringify(p)} (a ${kind}) is missing`);
    const files = new Map(onDisk.files.map((f) => [f.path, f]));
    for (const f of body.files) {
      const got = files.get(f.path);
      if (got && (got.sha256 !== f.sha256 || got.bytes !== f.bytes)) problems.push(`${JSON.stringify(f.path)} changed since the backup was taken`);
    }
    const links = new Map(onDisk.links.map((l) => [l.path, l.target]));
    for (const l of body.links) if (links.has(l.path) && links.get(l.path) !== l.target) problems.push(`${JSON.stringify(l.path)} points elsewhere than when the backup was taken`);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 10).join('; ');
    throw new Error(`${from} is refused, nothing was written: ${shown}${problems.length > 10 ? ` (and ${problems.length - 10} more)` : ''}`);
  }
  return manifest as T;
}

/**
 * Writes the checked entries under `prefix` of a backup into `into`: folders
 * (their modes set once filled), links, and files copied sparse and hashed
 * again on the way, so a file swapped after the check is still caught. Set-id
 * bits are never restored. On a mismatch, what this call wrote is removed.
 */
export function putBack(from: string, m: BackupEntries, prefix: string, into: string): number {
  const under = (p: string) => (prefix === '' ? p : p.startsWith(`${prefix}${path.sep}`) ? p.slice(prefix.length + 1) : undefined);
  const made = fs.existsSync(into) ? [] : [into];
  fs.mkdirSync(into, { recursive: true, mode: 0o700 });
  const dirs = m.dirs.flatMap((d) => (under(d.path) === undefined ? [] : [{ ...d, rel: under(d.path)! }]));
  let count = 0;
  try {
    for (const d of dirs) {
      fs.mkdirSync(path.join(into, d.rel), { mode: 0o700 });
      made.push(path.join(into, d.rel));
    }
    for (const f of m.files) {
      const rel = under(f.path);
      if (rel === undefined) continue;
      made.push(path.join(into, rel));
      const copied = copyFile(path.join(from, f.path), path.join(into, rel), { mode: f.mode });
      if (copied.sha256 !== f.sha256) throw new Error(`${JSON.stringify(f.path)} changed while it was restored`);
      count++;
    }
    for (const l of m.links) {
      const rel = under(l.path);
      if (rel === undefined) continue;
      made.push(path.join(into, rel));
      fs.symlinkSync(l.target, path.join(into, rel));
    }
    // Deepest first: a read-only folder is closed only once its content is in.
    for (const d of [...dirs].reverse()) fs.chmodSync(path.join(into, d.rel), d.mode & 0o777);
  } catch (err) {
    for (const p of made.reverse()) fs.rmSync(p, { recursive: true, force: true });
    throw err;
  }
  return count;
}
