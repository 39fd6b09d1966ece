import { ANCHOR_EVENT, FileWitness, openAuditStore, verifyAudit, type Anchor, type AuditRow } from '../common/stores/audit';
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
 * each link, each lookup column) and every anchor, then, with a witness
 * (DIPPER_AUDIT_WITNESS or `--witness FILE`), the table against the head
 * the witness holds; on a running stack's chain as on a copy. Prints each
 * problem and exits 1 on any.
 */
export async function auditVerify(config: DipperConfig, opts: { json?: boolean; witness?: string }, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const key = auditKey(config, loadOrCreateSecrets(config));
  const file = opts.witness ?? config.isphere.auditWitness;
  const report = await verifyAudit({ key, anchors: () => anchorsOf(config), rows: () => allRows(config), witness: file ? new FileWitness(file, key) : undefined });
  if (opts.json) out(JSON.stringify(report));
  else if (report.ok) out(`audit chain ok: ${report.records} records, ${report.anchors} anchors${report.witness ? `, witnessed to record ${report.witness.seq ?? 0}` : ''}`);
  else for (const p of report.problems) out(p.message);
  return report.ok ? 0 : 1;
}

/** `dipper audit list`: the records, oldest first, one JSON line each. */
export async function auditList(config: DipperConfig, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  for (const row of await allRows(config)) out(JSON.stringify({ seq: row.seq, ...JSON.parse(row.body), hash: row.hash }));
  return 0;
}
