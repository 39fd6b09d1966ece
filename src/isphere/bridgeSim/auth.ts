import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { BridgeError } from './errors';

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Lets through only requests bearing this token. Compared as digests in
 * constant time, so neither the length nor a prefix of a token leaks.
 */
export function requireBearer(token: string, name: string): RequestHandler {
  const expected = digest(token);
  return (req, _res, next) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    if (!match || !timingSafeEqual(digest(match[1]), expected)) throw new BridgeError(401, 'unauthorized', `This route needs the ${name}.`);
    next();
  };
}
