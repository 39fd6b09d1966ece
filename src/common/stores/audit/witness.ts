import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AuditEntry, AuditRow } from './chain';

/**
 * The chain's last head (its seq and hash), signed with the audit key and
 * kept where the operator chose, outside the data folder. Someone who can
 * rewrite the data folder (and so derive the default key, re-chain the
 * records and write matching anchors) cannot move the witness, so
 * `dipper audit verify` still sees a cut tail, a wiped table or a
 * rewritten chain. A head only ever moves forward.
 */
export interface WitnessHead {
  seq: number;
  hash: string;
  at: string;
  mac: string;
}

function macOf(key: string, seq: number, hash: string, at: string): string {
  return createHmac('sha256', key).update(`dipper audit witness v1\n${seq}\n${hash}\n${at}`).digest('hex');
}

/** A witness file inside the data folder guards nothing the data folder's reader cannot also change. */
export function checkWitnessPlace(file: string, dataDir: string): void {
  const rel = path.relative(path.resolve(dataDir), path.resolve(file));
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) throw new Error('DIPPER_AUDIT_WITNESS must be outside the data folder (another volume, or a folder the data folder\'s readers cannot write)');
}

export class FileWitness {
  /** The highest head this process has written: a slower append never moves it back. */
  private written = 0;

  constructor(
    readonly file: string,
    private readonly key: string,
  ) {}

  /**
   * Records the head after an append (inside its transaction), unless the
   * witness is already past it; written whole, under a new name, then
   * renamed. The same seq with another hash replaces it: an append whose
   * commit failed after its head was written gives its seq to the next one.
   */
  record(row: Pick<AuditRow, 'seq' | 'hash'>): void {
    if (row.seq < this.written) return;
    const now = this.read();
    if (now && (now.seq > row.seq || (now.seq === row.seq && now.hash === row.hash))) {
      this.written = now.seq;
      return;
    }
    const at = new Date().toISOString();
    const head: WitnessHead = { seq: row.seq, hash: row.hash, at, mac: macOf(this.key, row.seq, row.hash, at) };
    const draft = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(draft, `${JSON.stringify(head)}\n`, { mode: 0o600 });
    fs.renameSync(draft, this.file);
    this.written = row.seq;
  }

  /** The head there now; null when the witness has none yet. */
  read(): WitnessHead | null {
    try {
      return JSON.parse(fs.readFileSync(this.file, 'utf8')) as WitnessHead;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}

export type WitnessProblem =
  | { kind: 'witness_unsigned'; seq: number }
  | { kind: 'wiped'; seq: number }
  | { kind: 'witnessed_tail_cut'; seq: number }
  | { kind: 'rewritten'; seq: number }
  | { kind: 'copy'; seq: number; of: number }
  | { kind: 'unwitnessed'; seq: number };

export function describeWitnessProblem(p: WitnessProblem): string {
  switch (p.kind) {
    case 'witness_unsigned':
      return `the witness's head (record ${p.seq}) does not carry the audit key's signature: the witness was written by someone else, or the key changed`;
    case 'wiped':
      return `wiped: the witness saw ${p.seq} records and the table holds none`;
    case 'witnessed_tail_cut':
      return `tail truncated: the witness saw record ${p.seq}, and the table ends before it`;
    case 'rewritten':
      return `rewritten at ${p.seq}: the record there is not the one the witness saw (the chain was edited and chained again)`;
    case 'copy':
      return `copy at ${p.seq}: appended after the witness's last head, it repeats record ${p.of}`;
    case 'unwitnessed':
      return `unwitnessed at ${p.seq}: appended after the witness's last head (a write whose witness update was lost, or one made round Dipper)`;
  }
}

/** What a record says, leaving out what makes each copy new: its id and when it was made. */
function substance(body: string): string {
  try {
    const { record_id: _id, at: _at, ...rest } = JSON.parse(body) as AuditEntry;
    return JSON.stringify(rest);
  } catch {
    return body;
  }
}

/**
 * The rows and the witness's head as one moment: the rows first, then the
 * head, read again once when the head is past the last row (an append
 * between the two reads writes its head before its row is visible).
 */
export async function rowsWithHead<T extends { seq: number }>(readRows: () => Promise<T[]>, readHead: () => WitnessHead | null): Promise<{ rows: T[]; head: WitnessHead | null }> {
  let rows = await readRows();
  const head = readHead();
  if (head && (rows.at(-1)?.seq ?? 0) < head.seq) {
    await new Promise((r) => setTimeout(r, 250));
    rows = await readRows();
  }
  return { rows, head };
}

/** Checks the rows (all of them, in seq order) against the witness's head. */
export function checkAgainstWitness(rows: AuditRow[], head: WitnessHead | null, key: string): WitnessProblem[] {
  if (!head) return rows.length > 0 ? rows.map((r) => ({ kind: 'unwitnessed' as const, seq: r.seq })).slice(0, 1) : [];
  const mac = macOf(key, head.seq, head.hash, head.at);
  if (typeof head.mac !== 'string' || head.mac.length !== mac.length || !timingSafeEqual(Buffer.from(head.mac), Buffer.from(mac))) {
    return [{ kind: 'witness_unsigned', seq: head.seq }];
  }
  if (rows.length === 0) return head.seq > 0 ? [{ kind: 'wiped', seq: head.seq }] : [];
  const problems: WitnessProblem[] = [];
  const last = rows.at(-1)!.seq;
  const witnessed = rows.find((r) => r.seq === head.seq);
  if (head.seq > last) problems.push({ kind: 'witnessed_tail_cut', seq: head.seq });
  else if (!witnessed || witnessed.hash !== head.hash) problems.push({ kind: 'rewritten', seq: head.seq });
  const seen = new Map<string, number>();
  for (const row of rows) {
    if (row.seq <= head.seq) {
      if (!seen.has(substance(row.body))) seen.set(substance(row.body), row.seq);
      continue;
    }
    const of = seen.get(substance(row.body));
    problems.push(of === undefined ? { kind: 'unwitnessed', seq: row.seq } : { kind: 'copy', seq: row.seq, of });
  }
  return problems;
}
