import crypto from 'node:crypto';

/**
 * Bearer tokens are signed, not stored: any gateway replica verifies them
 * with the shared secret and learns (run, agent, launch generation) without
 * a lookup. The caller of every tool comes from here, never from tool input.
 * Revocation (tokens.ts has no say in it) is the gateway's revocation view.
 */
export interface AgentClaims {
  run_id: string;
  agent_id: string;
  /**
   * The launch this token was handed to: 1 for the first, one more for each
   * relaunch. A relaunch retires every older generation. Tokens minted
   * before generations existed have none and count as 0.
   */
  gen: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const PREFIX = 'dpa_';

function sign(secret: string, body: string): string {
  return crypto.createHmac('sha256', secret).update(body).digest('base64url');
}

/**
 * A token for one launch of one agent. Deterministic: the same launch (same
 * generation and issue time) always gets the same token, so asking for it
 * twice hands out nothing new.
 */
export function mintAgentToken(secret: string, claims: AgentClaims): string {
  const body = Buffer.from(JSON.stringify({ run_id: claims.run_id, agent_id: claims.agent_id, gen: claims.gen, exp: claims.exp })).toString('base64url');
  return `${PREFIX}${body}.${sign(secret, body)}`;
}

/** Expiry for a token issued at `issuedAtMs` that lives `ttlSeconds`. */
export const expiryOf = (issuedAtMs: number, ttlSeconds: number): number => Math.floor(issuedAtMs / 1000) + ttlSeconds;

/**
 * The claims of a valid, unexpired agent token signed with any of `secrets`
 * (the current signing secret first, then those still accepted during a
 * rotation); null for anything else.
 */
export function verifyAgentToken(secrets: readonly string[], token: string, now = Date.now()): AgentClaims | null {
  if (!token.startsWith(PREFIX)) return null;
  const [body, mac, extra] = token.slice(PREFIX.length).split('.');
  if (!body || !mac || extra !== undefined) return null;
  const given = Buffer.from(mac);
  const signed = secrets.some((secret) => {
    const expected = Buffer.from(sign(secret, body));
    return expected.length === given.length && crypto.timingSafeEqual(expected, given);
  });
  if (!signed) return null;
  try {
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<AgentClaims>;
    if (typeof claims.run_id !== 'string' || typeof claims.agent_id !== 'string' || typeof claims.exp !== 'number') return null;
    const gen = typeof claims.gen === 'number' ? claims.gen : 0;
    return claims.exp * 1000 > now ? { run_id: claims.run_id, agent_id: claims.agent_id, gen, exp: claims.exp } : null;
  } catch {
    return null;
  }
}
