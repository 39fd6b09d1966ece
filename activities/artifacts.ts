import fs from 'node:fs/promises';
import path from 'node:path';

/** A file a root's report points a person at: where, how large, and the start of it when it is text. */
export interface Artifact {
  /** Relative to the run's workspace. */
  path: string;
  bytes: number;
  /** The first characters of a text file; null for a binary file or a folder. */
  preview: string | null;
  /** Files of a folder named, counted (a folder is listed by its files, up to the limit). */
  kind: 'file' | 'folder';
  /** A text file whose preview was left out: the card's previews were full. */
  preview_omitted?: true;
}

/** Files shown per report, and characters of each text file: a card to read, not a file browser. */
const MAX_FILES = 20;
const PREVIEW_CHARS = 1200;
const PREVIEW_BYTES = 4096;
/** Previews in all: the list rides in the question workflow's input and the run's history, so it stays a few KiB. */
const PREVIEWS_CHARS = 12_000;

/**
 * Paths a report names, as a model writes them: `artifacts/api/out.md`,
 * `./README.md`, or absolute paths inside the workspace. Anything that
 * leaves the workspace is ignored, so a report cannot show a person (or
 * the card's reader) a file outside it.
 */
export function namedPaths(report: string, workspace: string): string[] {
  const found = new Set<string>();
  for (const m of report.matchAll(/(?:^|[\s`'"([<])((?:\/|\.\/)?[\w.-]+(?:\/[\w.-]+)+\/?|[\w-][\w.-]*\.[A-Za-z0-9]{1,8})(?=$|[\s`'")\]>,;:])/gm)) {
    const raw = m[1].replace(/[.]+$/, '');
    const rel = path.isAbsolute(raw) ? path.relative(workspace, raw) : path.normalize(raw);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
    found.add(rel.replace(/\/$/, ''));
  }
  return [...found];
}

function looksLikeText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  const text = bytes.toString('utf8');
  // Mostly printable: a few replacement characters are a cut multi-byte character at the end, not a binary.
  return (text.match(/\uFFFD/g)?.length ?? 0) <= 2;
}

async function describeFile(full: string, rel: string, size: number): Promise<Artifact> {
  let preview: string | null = null;
  const handle = await fs.open(full, 'r');
  try {
    const buf = Buffer.alloc(Math.min(size, PREVIEW_BYTES));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead);
    if (looksLikeText(head)) {
      const text = head.toString('utf8').replace(/\uFFFD+$/, '');
      preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
    }
  } finally {
    await handle.close();
  }
  return { path: rel, bytes: size, preview, kind: 'file' };
}

/**
 * The files a root's report names, and those in its plan's artifacts
 * folders, read on the run's host when the report arrives: the person's
 * card shows them as they were when the root handed in. Symlinks are not
 * followed (a link could point anywhere on the host).
 */
export async function reviewArtifacts(input: { workspace: string; report: string }): Promise<Artifact[]> {
  const root = path.resolve(input.workspace);
  const out: Artifact[] = [];
  const seen = new Set<string>();
  const add = async (rel: string, depth: number): Promise<void> => {
    if (out.length >= MAX_FILES || seen.has(rel)) return;
    seen.add(rel);
    const full = path.join(root, rel);
    const stat = await fs.lstat(full).catch(() => null);
    if (!stat) return;
    if (stat.isFile()) {
      out.push(await describeFile(full, rel, stat.size).catch(() => ({ path: rel, bytes: stat.size, preview: null, kind: 'file' as const })));
    } else if (stat.isDirectory() && depth < 3) {
      const entries = (await fs.readdir(full).catch(() => [] as string[])).sort();
      for (const name of entries) await add(path.join(rel, name), depth + 1);
    }
  };
  for (const rel of namedPaths(input.report, root)) await add(rel, 0);
  await add('artifacts', 0);
  // Past the budget, files are listed by path and size only.
  let left = PREVIEWS_CHARS;
  return out.map((f) => {
    if (f.preview === null) return f;
    if (f.preview.length > left) return { ...f, preview: null, preview_omitted: true as const };
    left -= f.preview.length;
    return f;
  });
}
