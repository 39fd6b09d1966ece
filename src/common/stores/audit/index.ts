import type { DipperConfig } from '../../../config';
import { paths } from '../../../paths';
import { openPool } from '../postgres';
import { AUDIT_SCHEMA, PgAuditStore } from './pgStore';
import { SqliteAuditStore } from './sqliteStore';
import type { AuditStore } from './store';
import { checkWitnessPlace, FileWitness } from './witness';

export { verifyChain, describe as describeProblem, type AuditEntry, type AuditRow, type Anchor, type Problem } from './chain';
export { AuditKeyConflict, AuditRecordConflict, type AuditStore } from './store';
export { AuditChainBroken, checkAgainstWitness, describeWitnessProblem, FileWitness, type WitnessHead, type WitnessProblem } from './witness';
export { verifyAudit, type AuditReport } from './verify';

/** The event whose data `{seq, hash}` anchors each append outside the chain's own table. */
export const ANCHOR_EVENT = 'isphere.audit_appended';

/**
 * The audit chain beside the event log: `<data>/audit.db`, or a PostgreSQL
 * table with DIPPER_DATABASE_URL; with a witness (DIPPER_AUDIT_WITNESS),
 * every append checks the chain against the witness's head before it
 * writes, and moves the head once its record is committed.
 */
export async function openAuditStore(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'> & { isphere?: { auditWitness?: string } }, key: string): Promise<AuditStore> {
  const file = config.isphere?.auditWitness;
  if (file) checkWitnessPlace(file, config.dataDir);
  // A head written after the commit, under the chain's own lock: it never names a record the chain lacks, two writers
  // never move it back, and a chain cut behind it refuses every append (witness.ts).
  const witness = file ? new FileWitness(file, key) : undefined;
  if (!config.databaseUrl) return new SqliteAuditStore(paths.audit(config.dataDir), key, witness);
  const pool = await openPool(config.databaseUrl, 4, AUDIT_SCHEMA);
  return new PgAuditStore(pool, key, () => pool.end(), witness);
}
