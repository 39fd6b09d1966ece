import path from 'node:path';
import type { ProcessAccount } from './runtimes/accounts';
import { readWorkspace } from './workspaceReader';

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

function previewOf(head: string | null): string | null {
  if (head === null) return null;
  const bytes = Buffer.from(head, 'base64');
  if (!looksLikeText(bytes)) return null;
  const text = bytes.toString('utf8').replace(/\uFFFD+$/, '');
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

/**
 * The files a root's report names, and those in its plan's artifacts
 * folders, read on the run's host when the report arrives: the person's
 * card shows them as they were when the root handed in. They are read with
 * the rights of `account` (a process of its own as that user) when agents
 * run as other users, so a person is shown nothing an agent could not read;
 * and in every case only inside the workspace, never through a link
 * (activities/workspaceReader.ts).
 */
export async function reviewArtifacts(input: { workspace: string; report: string; account?: ProcessAccount; dataDir?: string }): Promise<Artifact[]> {
  const root = path.resolve(input.workspace);
  const read = await readWorkspace(
    { workspace: root, paths: [...namedPaths(input.report, root), 'artifacts'], maxFiles: MAX_FILES, headBytes: PREVIEW_BYTES },
    { account: input.account, within: input.dataDir },
  );
  // Past the budget, files are listed by path and size only.
  let left = PREVIEWS_CHARS;
  return read.map((f): Artifact => {
    const preview = previewOf(f.head);
    const file: Artifact = { path: f.path, bytes: f.bytes, preview, kind: 'file' };
    if (preview === null) return file;
    if (preview.length > left) return { ...file, preview: null, preview_omitted: true };
    left -= preview.length;
    return file;
  });
}
