import type { DipperConfig } from '../../../config';
import { paths } from '../../../paths';
import { openPool } from '../postgres';
import { AUDIT_SCHEMA, PgAuditStore } from './pgStore';
import { SqliteAuditStore } from './sqliteStore';
import type { AuditStore } from './store';
import { checkWitnessPlace, FileWitness } from './witness';

export { verifyChain, describe as describeProblem, type AuditEntry, type AuditRow, type Anchor, type Problem } from './chain';
export { AuditKeyConflict, AuditRecordConflict, type AuditStore } from './store';
export { checkAgainstWitness, describeWitnessProblem, FileWitness, type WitnessHead, type WitnessProblem } from './witness';

/** The event whose data `{seq, hash}` anchors each append outside the chain's own table. */
export const ANCHOR_EVENT = 'isphere.audit_appended';

/**
 * The audit chain beside the event log: `<data>/audit.db`, or a PostgreSQL
 * table with DIPPER_DATABASE_URL; with a witness (DIPPER_AUDIT_WITNESS),
 * every append moves the witness's head before it answers.
 */
export async function openAuditStore(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'> & { isphere?: { auditWitness?: string } }, key: string): Promise<AuditStore> {
  const store = await openStore(config, key);
  const file = config.isphere?.auditWitness;
  if (!file) return store;
  checkWitnessPlace(file, config.dataDir);
  return witnessed(store, new FileWitness(file, key));
}

async function openStore(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'>, key: string): Promise<AuditStore> {
  if (!config.databaseUrl) return new SqliteAuditStore(paths.audit(config.dataDir), key);
  const pool = await openPool(config.databaseUrl, 4, AUDIT_SCHEMA);
  return new PgAuditStore(pool, key, () => pool.end());
}

function witnessed(store: AuditStore, witness: FileWitness): AuditStore {
  return {
    append: async (entry) => {
      const row = await store.append(entry);
      witness.record(row);
      return row;
    },
    rows: (after, limit) => store.rows(after, limit),
    rowsBefore: (seq, limit) => store.rowsBefore(seq, limit),
    ofApproval: (id) => store.ofApproval(id),
    close: () => store.close(),
  };
}
