import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { safeMessage } from '../log';
import { ToolError } from '../common/toolErrors';
import { inputError } from './mcp';
import type { RateLimiter } from './rateLimit';
import { rateLimited, retryAfterSeconds, serviceStatus } from '../common/serviceErrors';

/** An HTTP failure that renders itself; the code that throws it knows nothing of express. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    const err = inputError(parsed.error);
    throw new HttpError(400, 'invalid_input', err.message, err.extra);
  }
  return parsed.data;
}

/**
 * A workflow's refusal becomes an HTTP error with the route's status; a
 * service failure (unavailable, needs_repair) passes through untouched so
 * the error handler gives it its own status and Retry-After.
 */
export function asHttpError(err: unknown, status: number): unknown {
  if (err instanceof ToolError && serviceStatus(err) === undefined) return new HttpError(status, err.code, err.message, err.extra);
  return err;
}

/** Refuses a request over its caller's rate with 429 and Retry-After before any work is done. */
export function limitRate(limiter: RateLimiter, keyOf: (res: Response) => string) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const wait = limiter.take(keyOf(res));
    if (wait > 0) throw rateLimited(wait);
    next();
  };
}

/**
 * Where no token's bucket applies (the console's files, the webhook, a
 * request whose token was refused), the bucket is the client's address:
 * the connection's, or, from a balancer named in DIPPER_TRUSTED_PROXIES,
 * the one it forwards. Behind any other proxy, its clients share a bucket.
 */
export function addressOf(req: Request, trustedProxies: readonly string[] = []): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  // The balancer appends the client's address last; earlier entries are the client's own to write.
  const forwarded = trustedProxies.includes(peer) ? String(req.headers['x-forwarded-for'] ?? '').split(',').at(-1)?.trim() : undefined;
  return `address/${forwarded || peer}`;
}

export function limitByAddress(limiter: RateLimiter, trustedProxies: readonly string[] = []) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const wait = limiter.take(addressOf(req, trustedProxies));
    if (wait > 0) throw rateLimited(wait, 'from this address');
    next();
  };
}

export function bearer(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header || !header.startsWith('Bearer ')) return null;
  return header.slice(7).trim() || null;
}

/** 401 and nothing else: no hint about why a token was refused. */
export function unauthorized(res: Response): void {
  res.status(401).set('WWW-Authenticate', 'Bearer').json({ error: { code: 'unauthorized', message: 'Unauthorized.' } });
}

/** A well-signed token that no longer holds: its agent ended, its run ended, or its agent was launched again. */
export function revoked(res: Response): void {
  res
    .status(401)
    .set('WWW-Authenticate', 'Bearer error="invalid_token"')
    .json({ error: { code: 'token_revoked', message: 'This token was revoked: its agent or run has ended, or the agent was launched again with a new token.' } });
}

export function isMcpPath(req: Request): boolean {
  return req.path.startsWith('/mcp/');
}

/** The last middleware: every failure leaves as a clean JSON body, never a stack. */
export function errorHandler(log: { error: (o: object, m: string) => void }) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const e = err as { type?: string; status?: number };
    let status = 500;
    let code = 'internal';
    let message = 'Internal error.';
    let extra: Record<string, unknown> = err instanceof HttpError ? err.extra : {};
    const service = err instanceof ToolError ? serviceStatus(err) : undefined;
    if (err instanceof ToolError && service !== undefined) {
      status = service;
      code = err.code;
      message = err.message;
      extra = { retryable: err.retryable, ...err.extra };
      const wait = err.extra.retry_after_ms;
      if (typeof wait === 'number' && !res.headersSent) res.set('Retry-After', retryAfterSeconds(wait));
    } else if (err instanceof HttpError) {
      status = err.status;
      code = err.code;
      message = err.message;
    } else if (e.type === 'entity.parse.failed') {
      status = 400;
      code = 'invalid_json';
      message = 'The body is not valid JSON.';
    } else if (e.type === 'entity.too.large') {
      status = 413;
      code = 'payload_too_large';
      message = 'The body is too large.';
    } else if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      status = e.status;
      code = 'bad_request';
      message = 'The request could not be read.';
    } else {
      log.error({ path: req.path, err: safeMessage(err) }, 'request failed');
    }
    if (res.headersSent) return;
    if (isMcpPath(req)) {
      const rpc = status === 400 && code === 'invalid_json' ? -32700 : status === 500 ? -32603 : -32600;
      res.status(status).json({ jsonrpc: '2.0', error: { code: rpc, message }, id: null });
      return;
    }
    res.status(status).json({ error: { code, message, ...extra } });
  };
}
