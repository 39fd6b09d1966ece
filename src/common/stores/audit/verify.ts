import { setTimeout as sleep } from 'node:timers/promises';
import { describe, verifyChain, type Anchor, type AuditRow, type Problem } from './chain';
import { checkAgainstWitness, describeWitnessProblem, type WitnessHead, type WitnessProblem } from './witness';

export interface AuditReport {
  ok: boolean;
  records: number;
  anchors: number;
  /** The witness's head as read; null without a witness. */
  witness: { seq: number | null; at: string | null } | null;
  problems: ((Problem | WitnessProblem) & { message: string })[];
}

/**
 * The whole check, on a live chain as on a copy: every record, every
 * anchor of the event log, and the witness's head. Read in the order they
 * are written: anchors, then the head, then the rows (an anchor and a head
 * are written after their record's commit, so rows read last hold every
 * record they name, and a live append cannot look like a cut).
 */
export async function verifyAudit(o: { key: string; anchors: () => Promise<Anchor[]>; rows: () => Promise<AuditRow[]>; witness?: { read(): WitnessHead | null }; settleMs?: number }): Promise<AuditReport> {
  const anchors = await o.anchors();
  let head = o.witness?.read() ?? null;
  let rows = await o.rows();
  // Records past the head: an append between its commit and its witness write, or one the witness never saw.
  // Give the first a moment; a record still past the head then is reported, one that came meanwhile is left for the next check.
  const seen = rows.at(-1)?.seq ?? 0;
  if (o.witness && seen > (head?.seq ?? 0)) {
    await sleep(o.settleMs ?? 250);
    head = o.witness.read();
    rows = await o.rows();
  }
  const settled = Math.max(seen, head?.seq ?? 0);
  const problems = [
    ...verifyChain(rows, o.key, anchors).map((p) => ({ ...p, message: describe(p) })),
    ...(o.witness ? checkAgainstWitness(rows.filter((r) => r.seq <= settled), head, o.key).map((p) => ({ ...p, message: describeWitnessProblem(p) })) : []),
  ];
  return { ok: problems.length === 0, records: rows.length, anchors: anchors.length, witness: o.witness ? { seq: head?.seq ?? null, at: head?.at ?? null } : null, problems };
}
