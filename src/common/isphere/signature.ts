import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature of Dipper's approval webhooks, both ways: HMAC-SHA256 of
 * `<unix seconds>.<METHOD>.<path>.<raw body>` under a shared secret, sent as
 * `X-Dipper-Signature: t=<unix seconds>,v1=<hex>`. The path is the request's
 * path and query as it reaches the receiver (`/hooks/isphere/approvals/<run>/<approval>/decision`),
 * so a signed decision cannot be posted to another approval's URL; the time
 * is inside what is signed, so an old request cannot be sent again with a new time.
 */
export const SIGNATURE_HEADER = 'x-dipper-signature';
/** A signed request older (or newer) than this is refused. */
export const SIGNATURE_TOLERANCE_S = 300;

/** What a signature covers besides its time. */
export interface SignedRequest {
  method: string;
  /** Path and query, e.g. `/hooks/isphere/approvals/run_0123456789ab/apr_x/decision`. */
  path: string;
  body: string | Buffer;
}

function mac(secret: string, at: number, req: SignedRequest): string {
  return createHmac('sha256', secret).update(`${at}.${req.method.toUpperCase()}.${req.path}.`).update(req.body).digest('hex');
}

export function sign(secret: string, req: SignedRequest, at: number = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${mac(secret, at, req)}`;
}

export type Verdict = { ok: true; name: string } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' };

/** Which configured secret signed this request, if any, within the time window. */
export function verify(header: string | undefined, req: SignedRequest, secrets: { name: string; secret: string }[], now: number = Math.floor(Date.now() / 1000)): Verdict {
  const parts = new Map((header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const at = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!given || !Number.isInteger(at)) return { ok: false, reason: 'missing' };
  if (Math.abs(now - at) > SIGNATURE_TOLERANCE_S) return { ok: false, reason: 'stale' };
  const want = Buffer.from(given, 'utf8');
  for (const { name, secret } of secrets) {
    const got = Buffer.from(mac(secret, at, req), 'utf8');
    if (got.length === want.length && timingSafeEqual(got, want)) return { ok: true, name };
  }
  return { ok: false, reason: 'mismatch' };
}

/** The part of a URL a signature covers: its path and query. */
export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}
