import type { DipperConfig } from '../../../config';
import { paths } from '../../../paths';
import { openPool } from '../postgres';
import { AUDIT_SCHEMA, PgAuditStore } from './pgStore';
import { SqliteAuditStore } from './sqliteStore';
import type { AuditRow } from './chain';
import type { AuditStore } from './store';
import { checkWitnessPlace, FileWitness } from './witness';

export { verifyChain, describe as describeProblem, type AuditEntry, type AuditRow, type Anchor, type Problem } from './chain';
export { AuditKeyConflict, AuditRecordConflict, type AuditStore } from './store';
export { checkAgainstWitness, describeWitnessProblem, FileWitness, rowsWithHead, type WitnessHead, type WitnessProblem } from './witness';

/** The event whose data `{seq, hash}` anchors each append outside the chain's own table. */
export const ANCHOR_EVENT = 'isphere.audit_appended';

/**
 * The audit chain beside the event log: `<data>/audit.db`, or a PostgreSQL
 * table with DIPPER_DATABASE_URL; with a witness (DIPPER_AUDIT_WITNESS),
 * every append moves the witness's head before it answers.
 */
export async function openAuditStore(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'> & { isphere?: { auditWitness?: string } }, key: string): Promise<AuditStore> {
  const file = config.isphere?.auditWitness;
  if (file) checkWitnessPlace(file, config.dataDir);
  // Written inside each append's transaction, under the chain's own lock: two writers never move the head back, and a
  // row is never visible before its head (a witness that cannot be written fails the append, and so the send).
  const witness = file ? new FileWitness(file, key) : undefined;
  const onAppended = (row: AuditRow) => witness?.record(row);
  if (!config.databaseUrl) return new SqliteAuditStore(paths.audit(config.dataDir), key, onAppended);
  const pool = await openPool(config.databaseUrl, 4, AUDIT_SCHEMA);
  return new PgAuditStore(pool, key, () => pool.end(), onAppended);
}
