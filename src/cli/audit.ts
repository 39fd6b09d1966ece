import { ANCHOR_EVENT, checkAgainstWitness, describeProblem, describeWitnessProblem, FileWitness, openAuditStore, rowsWithHead, verifyChain, type Anchor, type AuditRow } from '../common/stores/audit';
import { openStores } from '../common/stores';
import { auditKey, loadOrCreateSecrets } from '../auth/secrets';
import type { DipperConfig } from '../config';

/** Every anchor in the event log: each append's seq and hash, kept apart from the chain's table. */
async function anchorsOf(config: DipperConfig): Promise<Anchor[]> {
  const stores = await openStores(config);
  try {
    const out: Anchor[] = [];
    for (let after = 0; ; ) {
      const page = await stores.events.ofType(ANCHOR_EVENT, after, 1000);
      for (const e of page) out.push({ seq: Number(e.data.seq), hash: String(e.data.hash) });
      if (page.length < 1000) return out;
      after = page.at(-1)!.seq;
    }
  } finally {
    await stores.close();
  }
}

async function allRows(config: DipperConfig): Promise<AuditRow[]> {
  const store = await openAuditStore(config, auditKey(config, loadOrCreateSecrets(config)));
  try {
    const rows: AuditRow[] = [];
    for (let after = 0; ; ) {
      const page = await store.rows(after, 10_000);
      rows.push(...page);
      if (page.length < 10_000) return rows;
      after = page.at(-1)!.seq;
    }
  } finally {
    await store.close();
  }
}

/**
 * `dipper audit verify`: checks the whole chain (contiguous, each HMAC,
 * each link, each lookup column) and the anchors, then, with a witness
 * (DIPPER_AUDIT_WITNESS or `--witness FILE`), the table against the head
 * the witness holds; prints each problem and exits 1 on any.
 */
export async function auditVerify(config: DipperConfig, opts: { json?: boolean; witness?: string }, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const key = auditKey(config, loadOrCreateSecrets(config));
  const file = opts.witness ?? config.isphere.auditWitness;
  const [{ rows, head }, anchors] = await Promise.all([rowsWithHead(() => allRows(config), () => (file ? new FileWitness(file, key).read() : null)), anchorsOf(config)]);
  const messages = [
    ...verifyChain(rows, key, anchors).map((p) => ({ ...p, message: describeProblem(p) })),
    ...(file ? checkAgainstWitness(rows, head, key).map((p) => ({ ...p, message: describeWitnessProblem(p) })) : []),
  ];
  const witness = file ? { seq: head?.seq ?? null, at: head?.at ?? null } : null;
  if (opts.json) out(JSON.stringify({ ok: messages.length === 0, records: rows.length, anchors: anchors.length, witness, problems: messages }));
  else if (messages.length === 0) out(`audit chain ok: ${rows.length} records, ${anchors.length} anchors${witness ? `, witnessed to record ${witness.seq ?? 0}` : ''}`);
  else for (const p of messages) out(p.message);
  return messages.length === 0 ? 0 : 1;
}

/** `dipper audit list`: the records, oldest first, one JSON line each. */
export async function auditList(config: DipperConfig, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  for (const row of await allRows(config)) out(JSON.stringify({ seq: row.seq, ...JSON.parse(row.body), hash: row.hash }));
  return 0;
}
