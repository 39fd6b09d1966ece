import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { DipperConfig } from '../../src/config';
import { paths } from '../../src/paths';

/**
 * Files on the run's host for the isphere tools: where a download may be
 * written and which files may be sent. A path is allowed only when its real
 * path (every symlink resolved) lies under the real path of an approved
 * directory: the run's own `isphere/downloads` or `isphere/outbound` in its
 * workspace, or one the operator configured. The file itself is opened
 * without following a symlink.
 */

export type FileRefusal = 'outside_approved_dir' | 'not_found' | 'not_a_file' | 'too_large' | 'exists_different';

/** A refusal the tool answers (non-retryable: the same path will be refused again). */
export const refuseFile = (reason: FileRefusal, message: string) => ApplicationFailure.create({ type: 'FileRefused', message, details: [{ reason }], nonRetryable: true });

export function approvedRoots(config: DipperConfig, runId: string, kind: 'downloads' | 'outbound'): string[] {
  const own = path.join(paths.runWorkspace(config.dataDir, runId), 'isphere', kind);
  return [own, ...(kind === 'downloads' ? config.isphere.downloadDirs : config.isphere.outboundDirs)];
}

async function realRoots(roots: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) out.push(await fs.realpath(r).catch(() => path.resolve(r)));
  return out;
}

const under = (real: string, roots: string[]) => roots.some((r) => real === r || real.startsWith(r + path.sep));

/**
 * The real directory a download goes to, made if missing. The nearest part
 * of it that exists must resolve under an approved root, so a symlinked
 * folder cannot lead out; the run's own download folder is made on first use.
 */
export async function confinedDir(dir: string, roots: string[]): Promise<string> {
  await fs.mkdir(roots[0], { recursive: true });
  const real = await realRoots(roots);
  let existing = dir;
  while (!(await fs.lstat(existing).then(() => true, () => false))) existing = path.dirname(existing);
  const resolved = await fs.realpath(existing);
  if (!under(resolved, real)) throw refuseFile('outside_approved_dir', 'output_dir is not under a download directory the operator approved.');
  const target = path.join(resolved, path.relative(existing, dir));
  await fs.mkdir(target, { recursive: true });
  const final = await fs.realpath(target);
  if (!under(final, real)) throw refuseFile('outside_approved_dir', 'output_dir is not under a download directory the operator approved.');
  return final;
}

export interface Inspected {
  real_path: string;
  file_name: string;
  size_bytes: number;
  sha256: string;
}

/** Opens a file to send, never through a symlink, and hashes it (refusing anything outside the roots, not regular, or too large). */
export async function openConfined(file: string, roots: string[], maxBytes: number): Promise<{ info: Inspected; bytes: Buffer }> {
  await fs.mkdir(roots[0], { recursive: true });
  const real = await realRoots(roots);
  const resolved = await fs.realpath(file).catch(() => null);
  if (resolved === null) throw refuseFile('not_found', 'file_path does not exist.');
  if (!under(resolved, real)) throw refuseFile('outside_approved_dir', 'file_path is not under an outbound directory the operator approved.');
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(resolved, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    throw refuseFile('not_a_file', 'file_path cannot be opened as a plain file.');
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw refuseFile('not_a_file', 'file_path is not a regular file.');
    if (stat.size > maxBytes) throw refuseFile('too_large', `The file is ${stat.size} bytes; at most ${maxBytes} may be sent.`);
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes) throw refuseFile('too_large', `The file is over ${maxBytes} bytes.`);
    return { info: { real_path: resolved, file_name: path.basename(resolved), size_bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }, bytes };
  } finally {
    await handle.close();
  }
}

/**
 * Writes downloaded bytes as `name` in `dir`: a `.part` file made fresh
 * (never through an existing name or symlink), flushed, then renamed into
 * place, readable by the workspace's group. A file already there with the
 * same bytes is kept (a repeated download changes nothing).
 */
export async function writeDownload(dir: string, name: string, bytes: Buffer): Promise<{ saved_path: string; size_bytes: number; sha256: string }> {
  const target = path.join(dir, name);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const same = await fs
    .readFile(target, { flag: constants.O_RDONLY | constants.O_NOFOLLOW })
    .then((old) => createHash('sha256').update(old).digest('hex') === sha256)
    .catch(() => false);
  if (same) return { saved_path: target, size_bytes: bytes.length, sha256 };
  const part = path.join(dir, `.${name}.${process.pid}.${Date.now()}.part`);
  const handle = await fs.open(part, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o640);
  try {
    await handle.writeFile(bytes);
    // Whatever the worker's umask: the workspace's group (the run's agents) reads it, nobody else.
    await handle.chmod(0o640);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(part, target);
  return { saved_path: target, size_bytes: bytes.length, sha256 };
}
