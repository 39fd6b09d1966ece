import express, { Router, type Request, type Response } from 'express';
import type { ModelProxyConfig } from '../config';
import type { Caller } from '../registry/capabilities';
import type { ModelGate, ModelRefusal, ModelUsage } from './budgets';

/**
 * The paths forwarded, exactly as written: express would also match
 * `/V1/Messages` or `/v1/messages/`, which must neither skip the count nor
 * reach the endpoint. `counted`: its answers are model turns with usage.
 */
const ROUTES = new Map([
  ['/model/v1/messages', { upstream: '/v1/messages', counted: true }],
  ['/model/v1/messages/count_tokens', { upstream: '/v1/messages/count_tokens', counted: false }],
]);
/** Request headers the model endpoint needs; the agent's credential is not among them. */
const PASSED = ['content-type', 'accept', 'anthropic-version', 'anthropic-beta'];
/** The output bound of a request that names none the proxy can read: the endpoint refuses such a request, but the claim must not be small. */
const UNKNOWN_MAX_TOKENS = 128_000;

function apiError(res: Response, status: number, type: string, message: string): void {
  res.status(status).json({ type: 'error', error: { type, message } });
}

function refuse(res: Response, refusal: ModelRefusal): void {
  if (refusal.retryAfter !== undefined) res.set('retry-after', String(refusal.retryAfter));
  apiError(res, refusal.status, refusal.type, refusal.message);
}

/**
 * The most tokens a request can use: its input is at most one token per
 * byte of its body, its output at most its max_tokens (thinking included).
 */
export function tokenBound(body: Buffer): number {
  let maxTokens: unknown;
  try {
    maxTokens = (JSON.parse(body.toString('utf8')) as { max_tokens?: unknown }).max_tokens;
  } catch {
    maxTokens = undefined;
  }
  return body.length + (Number.isSafeInteger(maxTokens) && (maxTokens as number) > 0 ? (maxTokens as number) : UNKNOWN_MAX_TOKENS);
}

/**
 * Dipper's model proxy: a Claude agent's CLI calls it with the agent's own
 * token as its API key, and it forwards to the configured endpoint with
 * the operator's key, so the key never reaches an agent's environment. A
 * token that was revoked (the agent ended) is refused before this router,
 * like every agent request. `gate` decides who may call and holds each
 * counted request's claim on the budgets while it is forwarded. Streams
 * pass through as they arrive; the usage each answer reports settles its
 * claim before the answer ends, so the agent's next request sees it.
 */
export function modelProxyRouter(config: ModelProxyConfig, callerOf: (res: Response) => Caller, gate: ModelGate): Router {
  const router = Router();
  const notServed = (_req: Request, res: Response) => apiError(res, 404, 'not_found_error', "Dipper's model proxy serves POST /v1/messages and /v1/messages/count_tokens.");
  router.use((req, res, next) => {
    // The raw path, before express's matching folds case and trailing slashes; the query is not forwarded.
    const route = ROUTES.get(req.originalUrl.split('?')[0]);
    if (req.method !== 'POST' || !route) return notServed(req, res);
    res.locals.modelRoute = route;
    next();
  });
  router.use(express.raw({ type: () => true, limit: '32mb' }), async (req: Request, res: Response) => {
    const route = res.locals.modelRoute as { upstream: string; counted: boolean };
    if (!config.apiKey) return apiError(res, 503, 'api_error', 'Dipper has no model key: set DIPPER_MODEL_API_KEY or DIPPER_MODEL_API_KEY_FILE.');
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const pass = await gate.enter(callerOf(res), res.locals.gen as number, route.counted ? () => tokenBound(body) : null).catch(() => undefined);
    // The usage (or the agent's skill) could not be read: refused as the endpoint's overload is, which the client retries.
    if (pass === undefined) return apiError(res, 529, 'overloaded_error', "Dipper could not read this agent's model usage; try again.");
    if (!('settle' in pass)) return refuse(res, pass);
    const headers: Record<string, string> = { 'x-api-key': config.apiKey };
    for (const name of PASSED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let upstream: globalThis.Response;
    try {
      upstream = await fetch(`${config.upstreamUrl}${route.upstream}`, { method: 'POST', headers, body, signal: abort.signal });
    } catch {
      // Not answered (unreachable, or the agent left first): the request's claim is let go, and it counts nothing.
      await pass.settle(null);
      return apiError(res, 502, 'api_error', 'The model endpoint could not be reached.');
    }
    res.status(upstream.status);
    for (const name of ['content-type', 'request-id', 'retry-after']) {
      const value = upstream.headers.get(name);
      if (value) res.set(name, value);
    }
    const tally = new UsageTally();
    try {
      for await (const chunk of upstream.body ?? []) {
        tally.feed(chunk as Uint8Array);
        res.write(chunk);
      }
    } catch {
      // The agent went away, or the endpoint cut the stream: what was counted so far still counts.
    }
    // An error answer is not a turn (the endpoint bills none); an answer that began counts, cut or not.
    await pass.settle(upstream.ok ? tally.total() : null);
    res.end();
  });
  return router;
}

/**
 * Reads the usage out of an answer as it passes: `message_start` carries
 * the input tokens (cache reads and writes included), `message_delta` the
 * output so far; a JSON answer carries both in `usage`.
 */
export class UsageTally {
  private text = '';
  private input = 0;
  private output = 0;
  private readonly decoder = new TextDecoder();

  feed(chunk: Uint8Array): void {
    this.text += this.decoder.decode(chunk, { stream: true });
    // Keep only what may hold a usage object still to come: SSE lines are read whole.
    const lines = this.text.split('\n');
    this.text = lines.pop() ?? '';
    for (const line of lines) this.read(line.startsWith('data:') ? line.slice(5) : line);
  }

  total(): ModelUsage {
    if (this.text) this.read(this.text);
    this.text = '';
    return { input_tokens: this.input, output_tokens: this.output };
  }

  private read(json: string): void {
    let value: { type?: string; usage?: Usage; message?: { usage?: Usage } };
    try {
      value = JSON.parse(json.trim()) as typeof value;
    } catch {
      return;
    }
    const start = value.type === 'message_start' ? value.message?.usage : value.type === 'message' ? value.usage : undefined;
    if (start) this.input = (start.input_tokens ?? 0) + (start.cache_creation_input_tokens ?? 0) + (start.cache_read_input_tokens ?? 0);
    const out = value.type === 'message_delta' || value.type === 'message' ? value.usage : undefined;
    if (out?.output_tokens !== undefined) this.output = out.output_tokens;
  }
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}
