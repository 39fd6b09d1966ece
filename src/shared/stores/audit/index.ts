import { Pool } from 'pg';
import type { DipperConfig } from '../../../config';
import { paths } from '../../../paths';
import { AUDIT_SCHEMA, PgAuditStore } from './pgStore';
import { SqliteAuditStore } from './sqliteStore';
import type { AuditStore } from './store';

export { verifyChain, describe as describeProblem, type AuditEntry, type AuditRow, type Anchor, type Problem } from './chain';
export { AuditKeyConflict, AuditRecordConflict, type AuditStore } from './store';

/** The event whose data `{seq, hash}` anchors each append outside the chain's own table. */
export const ANCHOR_EVENT = 'isphere.audit_appended';

/** Same lock as the other tables' creation: two processes starting at once do not race on CREATE. */
const SCHEMA_LOCK = 7_715_201;

/** The audit chain beside the event log: `<data>/audit.db`, or a PostgreSQL table with DIPPER_DATABASE_URL. */
export async function openAuditStore(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'>, key: string): Promise<AuditStore> {
  if (!config.databaseUrl) return new SqliteAuditStore(paths.audit(config.dataDir), key);
  const pool = new Pool({ connectionString: config.databaseUrl, max: 4 });
  pool.on('error', () => undefined);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await client.query(AUDIT_SCHEMA);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    await pool.end();
    throw err;
  } finally {
    client.release();
  }
  return new PgAuditStore(pool, key, () => pool.end());
}
