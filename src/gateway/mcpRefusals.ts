import type { Response } from 'express';
import { invalidInput, type ToolError } from '../common/toolErrors';
import type { Surface } from '../registry/types';
import { argumentsShape, malformedInput } from './inputGuards';
import { dryRunOf, renderError } from './mcp';

/** A JSON-RPC message as far as a refusal needs it: a tool call's name and arguments. */
type Message = { method?: unknown; id?: unknown; params?: { name?: unknown; arguments?: Record<string, unknown> } };
import { rateLimited, retryAfterSeconds, serviceStatus, unconfirmed } from '../common/serviceErrors';

/**
 * A request refused before any MCP server starts. A tool call gets the
 * spec's error shape as its result (retryable, with retry_after_ms): that is
 * what reaches the model, which can wait and call again, where an HTTP error
 * would surface as a transport failure. An isphere call gets its envelope. Anything else (initialize,
 * tools/list, notifications) gets the error's HTTP status with Retry-After,
 * which the client's transport reports.
 */
function refuse(res: Response, message: Message, error: ToolError, waitMs: number, surface: Surface): void {
  res.set('Retry-After', retryAfterSeconds(waitMs));
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  if (message.method === 'tools/call' && id !== null) {
    const tool = typeof message.params?.name === 'string' ? message.params.name.slice(0, 100) : '';
    const args = message.params?.arguments && typeof message.params.arguments === 'object' ? message.params.arguments : {};
    res.status(200).json({ jsonrpc: '2.0', id, result: renderError(error, surface, { tool, dryRun: dryRunOf(tool, args) }) });
    return;
  }
  res.status(serviceStatus(error) ?? 503).json({ jsonrpc: '2.0', id, error: { code: -32000, message: error.message, data: error.extra } });
}

/** Over its agent's rate, or with as many calls in flight as it may have: `rate_limited`, HTTP 429 outside a tool call. */
export function refuseOverRate(res: Response, message: Message, waitMs: number, surface: Surface, from?: string): void {
  refuse(res, message, rateLimited(waitMs, from), waitMs, surface);
}

/** The replica cannot see token revocations (fails closed): `unavailable`, HTTP 503 outside a tool call. */
export function refuseUnconfirmed(res: Response, message: Message, surface: Surface): void {
  const error = unconfirmed();
  refuse(res, message, error, Number(error.extra.retry_after_ms), surface);
}

/**
 * A tools/call whose `arguments` no tool's schema should see, refused as the body arrived (src/gateway/inputGuards.ts):
 * not an object (where the MCP SDK would answer -32603 with its schema's dump), or holding a `__proto__` key (which
 * the SDK's own parsing turns into a prototype, out of a strict schema's sight) or text that is not valid Unicode.
 * The surface's invalid-input refusal names the field. Answers and returns true when it refused.
 */
export function refuseMalformedArguments(res: Response, message: Message, surface: Surface): boolean {
  if (message.method !== 'tools/call') return false;
  const args: unknown = (message.params as { arguments?: unknown } | undefined)?.arguments;
  const problem = argumentsShape(args);
  const error = problem !== undefined ? invalidInput('arguments', problem) : args === undefined ? undefined : malformedInput(args as Record<string, unknown>);
  if (error === undefined) return false;
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  const tool = typeof message.params?.name === 'string' ? message.params.name.slice(0, 100) : '';
  const result = renderError(error, surface, { tool, dryRun: dryRunOf(tool, problem === undefined ? (args as Record<string, unknown>) : {}) });
  res.status(200).json({ jsonrpc: '2.0', id, result });
  return true;
}
