import { Client, Pool, type PoolClient } from 'pg';
import type { StoredText } from '../pure/content';
import type { DipperEvent } from './eventStore';
import { newContentRef, type ContentStore } from './contentStore';
import type { AgentUsage, EventStore, HeldUsage, ListOptions, ModelClaim, StoredEvent } from './eventStore';
import type { InboxWakes } from './inboxWakes';
import { PgRevokedTokens, REVOKED_TOKENS_SCHEMA, type RevokedTokens } from './revokedTokens';

/**
 * The event log and the content store in PostgreSQL, for Dipper on more
 * than one host (DIPPER_DATABASE_URL): every gateway and worker reaches
 * the same tables through a server instead of a shared file.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS dipper_events (
  seq BIGSERIAL PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,
  agent_id TEXT,
  type TEXT NOT NULL,
  ts BIGINT NOT NULL,
  data JSONB NOT NULL
);
CREATE INDEX IF NOT EXISTS dipper_events_by_run ON dipper_events (run_id, seq);
CREATE INDEX IF NOT EXISTS dipper_events_by_type ON dipper_events (type, seq);
CREATE INDEX IF NOT EXISTS dipper_events_by_run_type ON dipper_events (run_id, type);
CREATE TABLE IF NOT EXISTS dipper_content (
  ref TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  text TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS dipper_content_by_run ON dipper_content (run_id);
CREATE TABLE IF NOT EXISTS dipper_model_claims (
  claim_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  tokens BIGINT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS dipper_model_claims_by_run ON dipper_model_claims (run_id, at);
`;

/** The advisory lock's first key for model claims: with the run's hash as the second, one lock per run. */
const CLAIM_LOCK = 7_715_202;

/** Runs `step` in one transaction on a client of its own: committed if it returns, rolled back if it throws. */
export async function inTransaction<T>(pool: Pool, step: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await step(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Any number, so two processes starting at once do not both create the tables (CREATE IF NOT EXISTS races in PostgreSQL). */
const SCHEMA_LOCK = 7_715_201;

/**
 * A pool whose tables exist: `schema` is applied under an advisory lock
 * that every Dipper process takes for its CREATEs. An idle client's error
 * (the server restarted) must not end the process; the next query reconnects.
 */
export async function openPool(url: string, max: number, schema: string): Promise<Pool> {
  const pool = new Pool({ connectionString: url, max });
  pool.on('error', () => undefined);
  const client = await pool.connect().catch(async (err: unknown) => {
    await pool.end();
    throw err;
  });
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await client.query(schema);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
    await pool.end();
    throw err;
  }
  client.release();
  return pool;
}

export async function openPostgres(
  url: string,
): Promise<{ events: EventStore; content: ContentStore; wakes: InboxWakes; revoked: RevokedTokens; close: () => Promise<void> }> {
  const pool = await openPool(url, 10, SCHEMA + REVOKED_TOKENS_SCHEMA);
  let ended = false;
  const close = async () => {
    if (ended) return;
    ended = true;
    await pool.end();
  };
  return { events: new PgEventStore(pool, close), content: new PgContentStore(pool, close), wakes: new PgInboxWakes(pool, url), revoked: new PgRevokedTokens(pool), close };
}

const WAKE_CHANNEL = 'dipper_inbox';

/**
 * Wakes across hosts through LISTEN/NOTIFY: no table, no polling. A
 * listener whose connection drops reconnects; wakes sent meanwhile are
 * lost, which costs the polls it holds their window's end, nothing more.
 */
export class PgInboxWakes implements InboxWakes {
  readonly nonBlocking = true;
  constructor(
    private readonly pool: Pool,
    private readonly url: string,
  ) {}

  async publish(origin: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.pool.query(`SELECT pg_notify('${WAKE_CHANNEL}', $1 || ' ' || k) FROM unnest($2::text[]) AS k`, [origin, keys]);
  }

  async listen(origin: string, onWake: (key: string) => void): Promise<() => Promise<void>> {
    const url = this.url;
    let stopped = false;
    let client: Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const reconnect = (old: Client) => {
      if (stopped || client !== old) return;
      client = undefined;
      void old.end().catch(() => undefined);
      retry = setTimeout(() => void connect(), 1000);
      retry.unref();
    };
    // Never throws: a listener that cannot connect tries again each second, and polls meanwhile end at their window.
    function connect(): Promise<void> {
      const next = new Client({ connectionString: url, keepAlive: true });
      client = next;
      next.on('error', () => reconnect(next));
      next.on('end', () => reconnect(next));
      next.on('notification', (n) => {
        const payload = n.payload ?? '';
        const space = payload.indexOf(' ');
        if (space > 0 && payload.slice(0, space) !== origin) onWake(payload.slice(space + 1));
      });
      return next
        .connect()
        .then(() => next.query(`LISTEN ${WAKE_CHANNEL}`))
        .then(
          () => undefined,
          () => reconnect(next),
        );
    }
    // The first attempt is waited for, so a wake published once this returns is heard.
    await connect();
    // A connection cut without a word (a half-open socket) is found by asking it something now and then.
    const check = setInterval(() => {
      const current = client;
      if (current) void current.query('SELECT 1').catch(() => reconnect(current));
    }, 30_000);
    check.unref();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      clearInterval(check);
      await client?.end().catch(() => undefined);
    };
  }
}

export class PgEventStore implements EventStore {
  constructor(
    private readonly pool: Pool,
    readonly close: () => Promise<void>,
  ) {}

  async append(events: DipperEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.pool.query(
      `INSERT INTO dipper_events (event_id, run_id, agent_id, type, ts, data)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::jsonb[])
       ON CONFLICT (event_id) DO NOTHING`,
      [
        events.map((e) => e.event_id),
        events.map((e) => e.run_id),
        events.map((e) => e.agent_id),
        events.map((e) => e.type),
        events.map((e) => e.ts),
        events.map((e) => JSON.stringify(e.data)),
      ],
    );
  }

  async list(runId: string, opts: ListOptions = {}): Promise<StoredEvent[]> {
    const args: unknown[] = [runId, opts.after ?? 0, opts.limit ?? 1000];
    if (opts.type) args.push(opts.type);
    const { rows } = await this.pool.query(
      `SELECT seq, event_id, run_id, agent_id, type, ts, data FROM dipper_events
       WHERE run_id = $1 AND seq > $2 ${opts.type ? 'AND type = $4' : ''} ORDER BY seq LIMIT $3`,
      args,
    );
    // BIGINT columns come back as strings: sequence numbers and times fit a double.
    return rows.map((r) => ({ ...r, seq: Number(r.seq), ts: Number(r.ts) }));
  }

  async ofType(type: string, after = 0, limit = 1000): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query(
      'SELECT seq, event_id, run_id, agent_id, type, ts, data FROM dipper_events WHERE type = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [type, after, limit],
    );
    return rows.map((r) => ({ ...r, seq: Number(r.seq), ts: Number(r.ts) }));
  }

  async runOfApproval(approvalId: string): Promise<string | null> {
    const { rows } = await this.pool.query(`SELECT run_id FROM dipper_events WHERE type = 'isphere.approval_requested' AND data->>'approval_id' = $1 LIMIT 1`, [approvalId]);
    return rows[0]?.run_id ?? null;
  }

  async modelUsage(runId: string): Promise<AgentUsage[]> {
    const { rows } = await this.pool.query(
      `SELECT agent_id, COUNT(*) AS requests, COALESCE(SUM((data->>'input_tokens')::bigint), 0) AS input_tokens,
              COALESCE(SUM((data->>'output_tokens')::bigint), 0) AS output_tokens
       FROM dipper_events WHERE run_id = $1 AND type = 'model.usage' GROUP BY agent_id ORDER BY agent_id`,
      [runId],
    );
    return rows.map((r) => ({ agent_id: r.agent_id, requests: Number(r.requests), input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens) }));
  }

  async claimModelUse<R>(claim: ModelClaim, lapseBefore: number, refuse: (used: AgentUsage[], held: HeldUsage[]) => R | null): Promise<R | null> {
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CLAIM_LOCK, claim.run_id]);
      await client.query('DELETE FROM dipper_model_claims WHERE run_id = $1 AND at < $2', [claim.run_id, lapseBefore]);
      // One statement, one snapshot: a claim settled meanwhile is seen as its usage or as its claim, never as neither.
      const { rows } = await client.query(
        `SELECT 'used' AS kind, agent_id, COUNT(*) AS requests, COALESCE(SUM((data->>'input_tokens')::bigint), 0) AS input_tokens,
                COALESCE(SUM((data->>'output_tokens')::bigint), 0) AS output_tokens
         FROM dipper_events WHERE run_id = $1 AND type = 'model.usage' GROUP BY agent_id
         UNION ALL
         SELECT 'held', agent_id, COUNT(*), SUM(tokens), 0 FROM dipper_model_claims WHERE run_id = $1 GROUP BY agent_id`,
        [claim.run_id],
      );
      const used = rows.filter((r) => r.kind === 'used').map((r) => ({ agent_id: r.agent_id, requests: Number(r.requests), input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens) }));
      const held = rows.filter((r) => r.kind === 'held').map((r) => ({ agent_id: r.agent_id, requests: Number(r.requests), tokens: Number(r.input_tokens) }));
      const refusal = refuse(used, held);
      if (refusal === null) {
        await client.query('INSERT INTO dipper_model_claims (claim_id, run_id, agent_id, tokens, at) VALUES ($1, $2, $3, $4, $5)', [claim.claim_id, claim.run_id, claim.agent_id, claim.tokens, claim.at]);
      }
      return refusal;
    });
  }

  async settleModelUse(claimId: string, usage: DipperEvent | null): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM dipper_model_claims WHERE claim_id = $1', [claimId]);
      if (usage) {
        await client.query('INSERT INTO dipper_events (event_id, run_id, agent_id, type, ts, data) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING', [
          usage.event_id,
          usage.run_id,
          usage.agent_id,
          usage.type,
          usage.ts,
          JSON.stringify(usage.data),
        ]);
      }
    });
  }

}

export class PgContentStore implements ContentStore {
  constructor(
    private readonly pool: Pool,
    readonly close: () => Promise<void>,
  ) {}

  async put(runId: string, text: string): Promise<StoredText> {
    const ref = newContentRef();
    const bytes = Buffer.byteLength(text);
    await this.pool.query('INSERT INTO dipper_content (ref, run_id, bytes, text, created_at) VALUES ($1, $2, $3, $4, $5)', [ref, runId, bytes, text, Date.now()]);
    return { content_ref: ref, bytes };
  }

  async get(refs: Iterable<string>): Promise<Map<string, string>> {
    const all = [...new Set(refs)];
    if (all.length === 0) return new Map();
    const { rows } = await this.pool.query('SELECT ref, text FROM dipper_content WHERE ref = ANY($1::text[])', [all]);
    return new Map(rows.map((r) => [r.ref as string, r.text as string]));
  }

  async drop(refs: Iterable<string>): Promise<void> {
    await this.pool.query('DELETE FROM dipper_content WHERE ref = ANY($1::text[])', [[...refs]]);
  }

  async runs(): Promise<string[]> {
    const { rows } = await this.pool.query('SELECT DISTINCT run_id FROM dipper_content');
    return rows.map((r) => r.run_id as string);
  }

  async dropRun(runId: string): Promise<number> {
    return (await this.pool.query('DELETE FROM dipper_content WHERE run_id = $1', [runId])).rowCount ?? 0;
  }

  async usage(runId: string): Promise<{ pieces: number; bytes: number }> {
    const { rows } = await this.pool.query('SELECT COUNT(*) AS pieces, COALESCE(SUM(bytes), 0) AS bytes FROM dipper_content WHERE run_id = $1', [runId]);
    return { pieces: Number(rows[0].pieces), bytes: Number(rows[0].bytes) };
  }
}
