import type { Response } from 'express';
import type { ToolError } from '../registry/errors';
import { renderError } from './mcp';
import { rateLimited, retryAfterSeconds, serviceStatus, unconfirmed } from './serviceErrors';

/**
 * A request refused before any MCP server starts. A tool call gets the
 * spec's error shape as its result (retryable, with retry_after_ms): that is
 * what reaches the model, which can wait and call again, where an HTTP error
 * would surface as a transport failure. Anything else (initialize,
 * tools/list, notifications) gets the error's HTTP status with Retry-After,
 * which the client's transport reports.
 */
function refuse(res: Response, message: { method?: unknown; id?: unknown }, error: ToolError, waitMs: number): void {
  res.set('Retry-After', retryAfterSeconds(waitMs));
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  if (message.method === 'tools/call' && id !== null) {
    res.status(200).json({ jsonrpc: '2.0', id, result: renderError(error) });
    return;
  }
  res.status(serviceStatus(error) ?? 503).json({ jsonrpc: '2.0', id, error: { code: -32000, message: error.message, data: error.extra } });
}

/** Over its agent's rate: `rate_limited`, HTTP 429 outside a tool call. */
export function refuseOverRate(res: Response, message: { method?: unknown; id?: unknown }, waitMs: number): void {
  refuse(res, message, rateLimited(waitMs), waitMs);
}

/** The replica cannot see token revocations (fails closed): `unavailable`, HTTP 503 outside a tool call. */
export function refuseUnconfirmed(res: Response, message: { method?: unknown; id?: unknown }): void {
  const error = unconfirmed();
  refuse(res, message, error, Number(error.extra.retry_after_ms));
}
