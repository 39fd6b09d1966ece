import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runAs, type ProcessAccount } from './runtimes/accounts';

/** One file or folder entry the reader found, with the first bytes of a file. */
export interface ReadEntry {
  path: string;
  bytes: number;
  /** Base64 of up to `headBytes` from the start; null when the file could not be read whole (a hard link, a swap). */
  head: string | null;
}

export interface ReadRequest {
  /** The workspace as Dipper made it. */
  workspace: string;
  /** Where the opened workspace must really be: its path with every link resolved by Dipper beforehand. */
  expected: string;
  /** Paths relative to the workspace; a folder is listed by its files, three levels down at most. */
  paths: string[];
  maxFiles: number;
  headBytes: number;
}

/** What the reader may print: a few KiB per file at most, so anything past this is not the reader speaking. */
const MAX_OUTPUT = 1 << 20;
const READ_TIMEOUT_MS = 10_000;

/**
 * The reader, run as a process of its own (`node -e`), so that it holds the
 * rights of whom it runs as and nothing of the worker's: a fresh Node with
 * no module of Dipper's to load, which works from a built worker too. It
 * opens the workspace, then each path one component at a time below an open
 * folder (`/proc/self/fd/<folder>/<name>`, which is openat(2)) and never
 * through a link (O_NOFOLLOW): a link anywhere in a path, or a folder swapped
 * for one between a check and the open, ends that path instead of leading
 * out. A file with more than one name (a hard link, which could name a file
 * of the data folder) is listed without its contents.
 */
const READER_JS = String.raw`
'use strict';
const fs = require('node:fs');
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;
const req = JSON.parse(fs.readFileSync(0, 'utf8'));
const out = [];
const seen = new Set();
const under = (fd, name) => '/proc/self/fd/' + fd + '/' + name;
const root = fs.openSync(req.workspace, O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
if (fs.readlinkSync('/proc/self/fd/' + root) !== req.expected) process.exit(3);

function fileEntry(dirFd, name, rel, st) {
  const fd = fs.openSync(under(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const now = fs.fstatSync(fd);
    if (!now.isFile() || now.ino !== st.ino || now.dev !== st.dev) return null;
    if (now.nlink !== 1) return { path: rel, bytes: now.size, head: null };
    const buf = Buffer.alloc(Math.min(now.size, req.headBytes));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return { path: rel, bytes: now.size, head: buf.subarray(0, n).toString('base64') };
  } finally {
    fs.closeSync(fd);
  }
}

function visit(dirFd, name, rel, depth) {
  if (out.length >= req.maxFiles || seen.has(rel)) return;
  seen.add(rel);
  let st;
  try {
    st = fs.lstatSync(under(dirFd, name));
  } catch {
    return;
  }
  if (st.isFile()) {
    try {
      const entry = fileEntry(dirFd, name, rel, st);
      if (entry) out.push(entry);
    } catch {}
  } else if (st.isDirectory() && depth < 3) {
    let fd;
    try {
      fd = fs.openSync(under(dirFd, name), O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
      for (const child of fs.readdirSync('/proc/self/fd/' + fd).sort()) visit(fd, child, rel + '/' + child, depth + 1);
    } catch {
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
}

/** Walks to the folder holding a path's last part, each folder opened below the one before it, never through a link. */
function start(rel) {
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return;
  let fd = root;
  const opened = [];
  try {
    for (const part of parts.slice(0, -1)) {
      fd = fs.openSync(under(fd, part), O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
      opened.push(fd);
    }
    visit(fd, parts[parts.length - 1], rel, 0);
  } catch {
  } finally {
    for (const o of opened) fs.closeSync(o);
  }
}

for (const rel of req.paths) start(rel);
process.stdout.write(JSON.stringify(out));
`;

/**
 * Where the workspace really is. Below the data folder nothing may be a link
 * (Dipper made every folder there), so the path is the data folder's real
 * path and the rest as named: an agent that swapped a folder of its run for
 * a link finds the reader refusing the workspace, not following it.
 */
function expectedPath(workspace: string, within?: string): string | null {
  try {
    const rel = within ? path.relative(within, workspace) : '..';
    if (rel.startsWith('..') || path.isAbsolute(rel)) return fs.realpathSync(workspace);
    return path.join(fs.realpathSync(within!), rel);
  } catch {
    return null;
  }
}

/**
 * Reads what a report names from a workspace, as `account` when one is
 * given (an agent's rights, never the worker's), else as the worker itself,
 * inside the workspace only either way. Anything that goes wrong yields no
 * files: the report still reaches its person, without previews.
 */
export async function readWorkspace(request: Omit<ReadRequest, 'expected'>, o: { account?: ProcessAccount; within?: string } = {}): Promise<ReadEntry[]> {
  const expected = expectedPath(request.workspace, o.within);
  if (!expected) return [];
  const account = o.account;
  const argv = [process.execPath, '-e', READER_JS];
  const [command, ...args] = account ? runAs(account, argv) : argv;
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: '/', env: {}, stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), READ_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) child.kill('SIGKILL');
      else chunks.push(chunk);
    });
    child.on('error', () => undefined);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        resolve(code === 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReadEntry[]) : []);
      } catch {
        resolve([]);
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify({ ...request, expected } satisfies ReadRequest));
  });
}
