import type { DipperConfig } from '../../../config';
import { paths } from '../../../paths';
import { openPool } from '../postgres';
import { AUDIT_SCHEMA, PgAuditStore } from './pgStore';
import { SqliteAuditStore } from './sqliteStore';
import type { AuditStore } from './store';

export { verifyChain, describe as describeProblem, type AuditEntry, type AuditRow, type Anchor, type Problem } from './chain';
export { AuditKeyConflict, AuditRecordConflict, type AuditStore } from './store';

/** The event whose data `{seq, hash}` anchors each append outside the chain's own table. */
export const ANCHOR_EVENT = 'isphere.audit_appended';

/** The audit chain beside the event log: `<data>/audit.db`, or a PostgreSQL table with DIPPER_DATABASE_URL. */
export async function openAuditStore(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'>, key: string): Promise<AuditStore> {
  if (!config.databaseUrl) return new SqliteAuditStore(paths.audit(config.dataDir), key);
  const pool = await openPool(config.databaseUrl, 4, AUDIT_SCHEMA);
  return new PgAuditStore(pool, key, () => pool.end());
}
