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
 * rewritten chain.
 *
 * The head is written after its record's commit, so it may lag the chain
 * (a crash in between) but never leads it, and it only moves forward: a
 * lower seq leaves it where it is, the same seq with another hash is
 * refused. One head is enough history: its hash is chained to every record
 * before it, so a rewrite of any of them changes the record at the head.
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

/**
 * The chain is not the one its witness saw grow (cut, wiped, rewritten), or
 * the witness cannot vouch for it: nothing more is appended, so later sends
 * cannot paper over the damage. An operator looks first (docs/security.md).
 */
export class AuditChainBroken extends Error {
  constructor(what: string) {
    super(`the audit chain is not the one its witness saw, so no record is appended until an operator has looked (dipper audit verify): ${what}`);
  }
}

export class FileWitness {
  constructor(
    readonly file: string,
    private readonly key: string,
  ) {}

  /** The head there now; null when the witness has none yet (its folder is there, the file not). */
  read(): WitnessHead | null {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // A missing folder is an unmounted volume rather than a first append: starting afresh there would forget the head.
      if (!fs.existsSync(path.dirname(this.file))) throw new Error('the audit witness\'s folder is not there (an unmounted volume?)');
      return null;
    }
    try {
      return JSON.parse(text) as WitnessHead;
    } catch {
      throw new Error('the audit witness file holds no head (it is not JSON)');
    }
  }

  /**
   * Throws unless the chain, whose last record is `last` and whose record at
   * the head's seq has `hashThere`, is the one this witness saw grow. The
   * caller holds the chain's lock.
   */
  mustMatch(head: WitnessHead | null, last: number, hashThere: string | undefined): void {
    const problem = headProblem(head, this.key, last, hashThere);
    if (problem) throw new AuditChainBroken(describeWitnessProblem(problem));
  }

  /**
   * Moves the head to `row`, which the caller saw committed in the chain
   * with its lock held. A lower seq leaves the head (a slower writer: the
   * witness never moves back); the same seq with another hash is refused.
   * Written whole under a new name, synced, then renamed.
   */
  record(row: Pick<AuditRow, 'seq' | 'hash'>): void {
    const now = this.read();
    if (now && now.seq === row.seq && now.hash !== row.hash) throw new AuditChainBroken(`the witness holds record ${row.seq} with another hash`);
    if (now && now.seq >= row.seq) return;
    const at = new Date().toISOString();
    const head: WitnessHead = { seq: row.seq, hash: row.hash, at, mac: macOf(this.key, row.seq, row.hash, at) };
    const draft = `${this.file}.${process.pid}.tmp`;
    try {
      const fd = fs.openSync(draft, 'w', 0o600);
      try {
        fs.writeSync(fd, `${JSON.stringify(head)}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(draft, this.file);
    } catch (err) {
      // The code says what went wrong; the path stays out of what the caller (an activity's failure) records.
      throw new Error(`the audit witness could not be written (${(err as NodeJS.ErrnoException).code ?? 'error'}): record ${row.seq} is committed, and its retry or the next append moves the witness`);
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

/** The head against the chain: signed, not past the last record, and the record at its seq the one it saw. */
function headProblem(head: WitnessHead | null, key: string, last: number, hashThere: string | undefined): WitnessProblem | null {
  if (!head) return null;
  const mac = macOf(key, head.seq, head.hash, head.at);
  if (typeof head.mac !== 'string' || head.mac.length !== mac.length || !timingSafeEqual(Buffer.from(head.mac), Buffer.from(mac))) {
    return { kind: 'witness_unsigned', seq: head.seq };
  }
  if (last === 0) return head.seq > 0 ? { kind: 'wiped', seq: head.seq } : null;
  if (head.seq > last) return { kind: 'witnessed_tail_cut', seq: head.seq };
  return hashThere === head.hash ? null : { kind: 'rewritten', seq: head.seq };
}

/** Checks the rows (all of them, in seq order) against the witness's head. */
export function checkAgainstWitness(rows: AuditRow[], head: WitnessHead | null, key: string): WitnessProblem[] {
  if (!head) return rows.length > 0 ? [{ kind: 'unwitnessed', seq: rows[0].seq }] : [];
  const problem = headProblem(head, key, rows.at(-1)?.seq ?? 0, rows.find((r) => r.seq === head.seq)?.hash);
  if (problem?.kind === 'witness_unsigned' || problem?.kind === 'wiped') return [problem];
  const problems: WitnessProblem[] = problem ? [problem] : [];
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
