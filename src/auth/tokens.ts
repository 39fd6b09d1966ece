import crypto from 'node:crypto';

/**
 * Bearer tokens are signed, not stored: any gateway replica verifies them
 * with the shared secret and learns (run, agent) without a lookup. The
 * caller of every tool comes from here, never from tool input.
 */
export interface AgentClaims {
  run_id: string;
  agent_id: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const PREFIX = 'dpa_';

function sign(secret: string, body: string): string {
  return crypto.createHmac('sha256', secret).update(body).digest('base64url');
}

export function mintAgentToken(secret: string, runId: string, agentId: string, ttlSeconds: number, now = Date.now()): string {
  const claims: AgentClaims = { run_id: runId, agent_id: agentId, exp: Math.floor(now / 1000) + ttlSeconds };
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${PREFIX}${body}.${sign(secret, body)}`;
}

/** The claims of a valid, unexpired agent token; null for anything else. */
export function verifyAgentToken(secret: string, token: string, now = Date.now()): AgentClaims | null {
  if (!token.startsWith(PREFIX)) return null;
  const [body, mac, extra] = token.slice(PREFIX.length).split('.');
  if (!body || !mac || extra !== undefined) return null;
  const expected = Buffer.from(sign(secret, body));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return null;
  try {
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as AgentClaims;
    if (typeof claims.run_id !== 'string' || typeof claims.agent_id !== 'string' || typeof claims.exp !== 'number') return null;
    return claims.exp * 1000 > now ? claims : null;
  } catch {
    return null;
  }
}

/** Constant-time comparison for the operator token. */
export function sameSecret(a: string, b: string): boolean {
  const x = crypto.createHash('sha256').update(a).digest();
  const y = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(x, y);
}
