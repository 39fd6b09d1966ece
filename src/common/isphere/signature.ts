import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature of Dipper's approval webhooks, both ways: HMAC-SHA256 of
 * `<unix seconds>.<raw body>` under a shared secret, sent as
 * `X-Dipper-Signature: t=<unix seconds>,v1=<hex>`. The time is inside what
 * is signed, so an old request cannot be sent again with a new time.
 */
export const SIGNATURE_HEADER = 'x-dipper-signature';
/** A signed request older (or newer) than this is refused. */
export const SIGNATURE_TOLERANCE_S = 300;

export function sign(secret: string, body: string | Buffer, at: number = Math.floor(Date.now() / 1000)): string {
  const mac = createHmac('sha256', secret).update(`${at}.`).update(body).digest('hex');
  return `t=${at},v1=${mac}`;
}

export type Verdict = { ok: true; name: string } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' };

/** Which configured secret signed this body, if any, within the time window. */
export function verify(header: string | undefined, body: Buffer, secrets: { name: string; secret: string }[], now: number = Math.floor(Date.now() / 1000)): Verdict {
  const parts = new Map((header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const at = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!given || !Number.isInteger(at)) return { ok: false, reason: 'missing' };
  if (Math.abs(now - at) > SIGNATURE_TOLERANCE_S) return { ok: false, reason: 'stale' };
  const want = Buffer.from(given, 'utf8');
  for (const { name, secret } of secrets) {
    const mac = Buffer.from(createHmac('sha256', secret).update(`${at}.`).update(body).digest('hex'), 'utf8');
    if (mac.length === want.length && timingSafeEqual(mac, want)) return { ok: true, name };
  }
  return { ok: false, reason: 'mismatch' };
}
