import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { joinBoards } from './boards';
import { TaskServiceError } from './errors';
import { iso, type Caller, type Store } from './store';

export interface TokenPair {
  token: string;
  refreshToken: string;
  expiresAt: string;
}

export interface TokenPolicy {
  adminKey: string;
  tokenTtlSeconds: number;
  refreshTtlSeconds: number;
}

/** Expired rows are kept this long so their holder hears token_expired, not unauthorized, then swept. */
const EXPIRED_KEPT_MS = 7 * 24 * 3600 * 1000;

function hash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function unauthorized(message = 'A valid token is required.'): TaskServiceError {
  return new TaskServiceError(401, 'unauthorized', message);
}

/**
 * Per-agent tokens: an access token for the runtime routes and a refresh
 * token that trades itself for a new pair once. Only their SHA-256 hashes are
 * stored, so the database file grants nothing by itself.
 */
export function createTokens(store: Store, policy: TokenPolicy) {
  const adminHash = createHash('sha256').update(policy.adminKey, 'utf8').digest();

  function mint(caller: Caller, accessTtlSeconds: number): TokenPair {
    const now = store.now();
    const token = `tsa_${randomBytes(32).toString('base64url')}`;
    const refreshToken = `tsr_${randomBytes(32).toString('base64url')}`;
    const expiresAt = now + accessTtlSeconds * 1000;
    const insert = store.sql(
      'INSERT INTO tokens (hash, kind, workspace, agent, expires_at, access_ttl_seconds) VALUES (?, ?, ?, ?, ?, ?)',
    );
    insert.run(hash(token), 'access', caller.workspace, caller.agent, expiresAt, accessTtlSeconds);
    insert.run(hash(refreshToken), 'refresh', caller.workspace, caller.agent, now + policy.refreshTtlSeconds * 1000, accessTtlSeconds);
    store.sql('DELETE FROM tokens WHERE expires_at < ?').run(now - EXPIRED_KEPT_MS);
    return { token, refreshToken, expiresAt: iso(expiresAt) };
  }

  return {
    /** Both sides hashed to one length first, so the comparison takes the same time whatever was sent. */
    isAdmin(presented: string | null): boolean {
      if (presented === null) return false;
      return timingSafeEqual(createHash('sha256').update(presented, 'utf8').digest(), adminHash);
    },

    issue(caller: Caller, channels: string[], ttlSeconds?: number): TokenPair {
      return store.db
        .transaction(() => {
          joinBoards(store, caller, channels);
          return mint(caller, ttlSeconds ?? policy.tokenTtlSeconds);
        })
        .immediate();
    },

    /** The old refresh token is deleted in the same transaction, so two racing refreshes cannot both succeed. */
    refresh(caller: Caller, refreshToken: string): TokenPair {
      return store.db
        .transaction(() => {
          const row = store.sql('SELECT * FROM tokens WHERE hash = ?').get(hash(refreshToken)) as TokenRow | undefined;
          if (!row || row.kind !== 'refresh' || row.workspace !== caller.workspace || row.agent !== caller.agent) {
            throw unauthorized('Unknown refresh token.');
          }
          if (row.expires_at <= store.now()) throw new TaskServiceError(401, 'token_expired', 'The refresh token has expired.');
          store.sql('DELETE FROM tokens WHERE hash = ?').run(row.hash);
          return mint(caller, row.access_ttl_seconds);
        })
        .immediate();
    },

    /** The caller an access token stands for, checked against the route's workspace and agent. */
    verify(presented: string | null, workspace: string, agent: string): Caller {
      if (presented === null) throw unauthorized();
      const row = store.sql('SELECT * FROM tokens WHERE hash = ?').get(hash(presented)) as TokenRow | undefined;
      if (!row || row.kind !== 'access') throw unauthorized();
      if (row.expires_at <= store.now()) throw new TaskServiceError(401, 'token_expired', 'The token has expired; refresh it.');
      if (row.workspace !== workspace || row.agent !== agent) {
        throw new TaskServiceError(403, 'forbidden', 'This token belongs to another agent or workspace.');
      }
      return { workspace, agent };
    },
  };
}

export type Tokens = ReturnType<typeof createTokens>;

interface TokenRow {
  hash: string;
  kind: 'access' | 'refresh';
  workspace: string;
  agent: string;
  expires_at: number;
  access_ttl_seconds: number;
}
