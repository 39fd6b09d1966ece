import type { NextFunction, Request, Response } from 'express';
import type { DipperConfig } from '../config';

/**
 * The MCP transport spec asks servers to check `Origin`: a web page the
 * operator visits must not reach a gateway on localhost through DNS
 * rebinding. A request without the header (an agent runtime, curl, the
 * CLI) is no browser's and passes; one with it passes only from the
 * gateway's own origin or one listed in DIPPER_ALLOWED_ORIGINS.
 */
export function checkOrigin(config: Pick<DipperConfig, 'publicUrl' | 'allowedOrigins'>) {
  const own = new URL(config.publicUrl);
  const allowed = new Set([own.origin, ...config.allowedOrigins.map(originOf).filter((o): o is string => o !== null)]);
  // A gateway on loopback is the same gateway under any loopback name a browser uses for it.
  if (LOOPBACK.has(own.hostname)) for (const host of LOOPBACK) allowed.add(`${own.protocol}//${host}${own.port ? `:${own.port}` : ''}`);
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (origin === undefined || allowed.has(originOf(origin) ?? '')) return next();
    res.status(403).json({ error: { code: 'forbidden_origin', message: 'Requests from this origin are not allowed (DIPPER_ALLOWED_ORIGINS).' } });
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `scheme://host[:port]` as URL spells it, or null for what is not an origin (including the literal "null"). */
function originOf(value: string): string | null {
  try {
    const u = new URL(value);
    return u.origin === 'null' ? null : u.origin;
  } catch {
    return null;
  }
}
