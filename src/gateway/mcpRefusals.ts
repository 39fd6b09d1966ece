import type { Response } from 'express';
import { renderError } from './mcp';
import { rateLimited, retryAfterSeconds } from './serviceErrors';

/**
 * A request over its agent's rate, answered without starting an MCP server.
 * A tool call gets the spec's error shape as its result (`rate_limited`,
 * retryable, with retry_after_ms): that is what reaches the model, which can
 * wait and call again, where an HTTP error would surface as a transport
 * failure. Anything else (initialize, tools/list, notifications) gets HTTP
 * 429 with Retry-After, which the client's transport reports.
 */
export function refuseOverRate(res: Response, message: { method?: unknown; id?: unknown }, waitMs: number): void {
  const error = rateLimited(waitMs);
  res.set('Retry-After', retryAfterSeconds(waitMs));
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  if (message.method === 'tools/call' && id !== null) {
    res.status(200).json({ jsonrpc: '2.0', id, result: renderError(error) });
    return;
  }
  res.status(429).json({ jsonrpc: '2.0', id, error: { code: -32000, message: error.message, data: error.extra } });
}
