import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * File copies for backups and restores of folders that agents write into.
 * An agent controls its workspace: a 10 GiB sparse file, a file that grows,
 * vanishes or turns into a pipe or a link while it is copied, a folder
 * swapped for a link to `/`. None of these may fill the disk, hang or stop
 * a backup: such a file is left out and named, never followed.
 */

/** Not copied, for the reason given; the backup goes on. */
export class LeftOut extends Error {}

/** What a backup could not keep of a folder agents write, and why. */
export interface SkippedFile {
  path: string;
  bytes?: number;
  reason: string;
}

const CHUNK = 64 * 1024;
const ZEROS = Buffer.alloc(CHUNK);
/** Failures of the source file that an agent can cause: the file is left out, not the backup stopped. */
const AGENT_CAUSED: Record<string, string> = {
  ENOENT: 'removed while the backup ran',
  EACCES: 'not readable by the backup',
  EPERM: 'not readable by the backup',
  ELOOP: 'turned into a link while the backup ran',
  EINVAL: 'changed while the backup ran',
};

export const byteCount = (n: number) => `${n.toLocaleString('en')} bytes`;

function sourceFailure(err: unknown): never {
  const code = (err as NodeJS.ErrnoException).code;
  if (code && AGENT_CAUSED[code]) throw new LeftOut(AGENT_CAUSED[code]);
  throw err;
}

/**
 * Whether what `fd` opened lies under `realRoot`, asked of /proc (Linux):
 * whatever link a folder on its path became meanwhile, this is the file
 * really opened. Without /proc, its path's real path (a narrow race left).
 */
function opened(fd: number, file: string, realRoot: string): string {
  let where: string;
  let via = file;
  try {
    where = fs.readlinkSync(`/proc/self/fd/${fd}`);
    via = `/proc/self/fd/${fd}`;
  } catch {
    where = fs.realpathSync(file);
  }
  const rel = path.relative(realRoot, where);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new LeftOut('outside the folder backed up (a folder on its path became a link)');
  return via;
}

/**
 * Opens a plain file without following a link at its end, without blocking
 * on a pipe swapped in for it, and, given `within`, only if it lies there.
 */
function openPlain(file: string, within?: string): { fd: number; size: number; mode: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    sourceFailure(err);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new LeftOut('not a plain file');
    if (within) opened(fd, file, within);
    return { fd, size: st.size, mode: st.mode & 0o777 };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/** A folder's entries, read from the very folder opened (never through a link it became), if it lies under `realRoot`. */
function listFolder(dir: string, realRoot: string): fs.Dirent[] {
  let fd: number;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new LeftOut('turned into a link while the backup ran');
    sourceFailure(err);
  }
  try {
    return fs.readdirSync(opened(fd, dir, realRoot), { withFileTypes: true });
  } catch (err) {
    if (err instanceof LeftOut) throw err;
    sourceFailure(err);
  } finally {
    fs.closeSync(fd);
  }
}

/** SHA-256 and length of a file, read a chunk at a time: a file of any size, in constant memory. */
export function hashFile(file: string): { bytes: number; sha256: string } {
  const { fd } = openPlain(file);
  try {
    const hash = crypto.createHash('sha256');
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    for (let n; (n = fs.readSync(fd, buf, 0, CHUNK, pos)) > 0; pos += n) hash.update(buf.subarray(0, n));
    return { bytes: pos, sha256: hash.digest('hex') };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Copies a file chunk by chunk and hashes it on the way. Chunks of zeros are
 * not written, so a sparse file stays sparse (a hole costs no disk). More
 * than `maxBytes` (said by its size, or found while reading a file that
 * grows) is left out. The copy gets `mode` (default: the original's), never
 * set-id bits. On any failure the partial copy is removed.
 */
export function copyFile(src: string, dest: string, o: { maxBytes?: number; within?: string; mode?: number }): { bytes: number; sha256: string } {
  const max = o.maxBytes ?? Infinity;
  const from = openPlain(src, o.within);
  let out: number | undefined;
  try {
    if (from.size > max) throw new LeftOut(`${byteCount(from.size)}, over the limit of ${byteCount(max)}`);
    out = fs.openSync(dest, 'wx', 0o600);
    const hash = crypto.createHash('sha256');
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    for (let n; (n = fs.readSync(from.fd, buf, 0, CHUNK, pos)) > 0; pos += n) {
      if (pos + n > max) throw new LeftOut(`grew over the limit of ${byteCount(max)} while it was copied`);
      const chunk = buf.subarray(0, n);
      hash.update(chunk);
      if (!chunk.equals(ZEROS.subarray(0, n))) fs.writeSync(out, chunk, 0, n, pos);
    }
    // The length a trailing hole would otherwise leave short.
    fs.ftruncateSync(out, pos);
    fs.fchmodSync(out, (o.mode ?? from.mode) & 0o777);
    return { bytes: pos, sha256: hash.digest('hex') };
  } catch (err) {
    if (out !== undefined) fs.rmSync(dest, { force: true });
    throw err;
  } finally {
    fs.closeSync(from.fd);
    if (out !== undefined) fs.closeSync(out);
  }
}

/**
 * Copies a folder's tree: plain files (each at most `maxFileBytes`), folders
 * with their modes, links as links (never followed); pipes and sockets are
 * not data. `take` may claim a file for the caller (a database it copies its
 * own way). A failure a writer of the tree can cause, below its top level,
 * leaves that one entry out (returned, and logged); at the top level, where
 * only Dipper writes, it stops the copy.
 */
export function copyTree(given: string, into: string, o: { maxFileBytes: number; skip?: (rel: string) => boolean; take?: (rel: string) => boolean; log: (line: string) => void }): SkippedFile[] {
  // The folder itself may be a link (a data folder on another volume); below it, nothing is followed.
  const root = fs.realpathSync(given);
  const skipped: SkippedFile[] = [];
  const walk = (rel: string, depth: number) => {
    for (const entry of listFolder(path.join(root, rel), root)) {
      const name = path.join(rel, entry.name);
      if (o.skip?.(name)) continue;
      const src = path.join(root, name);
      const dest = path.join(into, name);
      try {
        if (entry.isDirectory()) {
          const mode = fs.lstatSync(src).mode & 0o777;
          fs.mkdirSync(dest, { mode: 0o700 });
          walk(name, depth + 1);
          // Its own mode once its content is in (a read-only folder would refuse it before).
          fs.chmodSync(dest, mode);
        } else if (entry.isFile()) {
          if (!o.take?.(name)) copyFile(src, dest, { maxBytes: o.maxFileBytes, within: root });
        } else if (entry.isSymbolicLink()) {
          fs.symlinkSync(fs.readlinkSync(src), dest);
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        // At the top level only Dipper writes: anything wrong there stops the backup.
        if (depth === 0 || !(err instanceof LeftOut || AGENT_CAUSED[code])) throw err;
        const reason = err instanceof LeftOut ? err.message : AGENT_CAUSED[code];
        let bytes: number | undefined;
        try {
          bytes = entry.isFile() ? fs.lstatSync(src).size : undefined;
        } catch {
          // Gone: no size to tell.
        }
        skipped.push({ path: name, ...(bytes === undefined ? {} : { bytes }), reason });
        // JSON quotes: a file name an agent chose cannot forge a line of its own.
        o.log(`left out ${JSON.stringify(name)}: ${reason}`);
      }
    }
  };
  walk('', 0);
  return skipped;
}
