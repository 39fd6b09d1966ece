import express, { Router, type Request, type Response } from 'express';
import type { ModelProxyConfig } from '../config';
import type { Caller } from '../registry/capabilities';
import type { BudgetSpent } from '../../workflows/agent/messages';

/** Tokens one model request used, as the Messages API reports them. */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
}

const ROUTES = ['/v1/messages', '/v1/messages/count_tokens'];
/** Request headers the model endpoint needs; the agent's credential is not among them. */
const PASSED = ['content-type', 'accept', 'anthropic-version', 'anthropic-beta'];

function apiError(res: Response, status: number, type: string, message: string): void {
  res.status(status).json({ type: 'error', error: { type, message } });
}

/**
 * Dipper's model proxy: a Claude agent's CLI calls it with the agent's own
 * token as its API key, and it forwards to the configured endpoint with
 * the operator's key, so the key never reaches an agent's environment. A
 * token that was revoked (the agent ended) is refused before this router,
 * like every agent request. Streams pass through as they arrive; the usage
 * each answer reports is handed to `onUsage`, and recorded before the
 * answer ends, so the agent's next request is checked against it.
 */
export function modelProxyRouter(
  config: ModelProxyConfig,
  callerOf: (res: Response) => Caller,
  onUsage: (caller: Caller, usage: ModelUsage) => Promise<void>,
  budgetSpent?: (res: Response) => Promise<BudgetSpent | null>,
): Router {
  const router = Router();
  router.post(ROUTES, express.raw({ type: () => true, limit: '32mb' }), async (req: Request, res: Response) => {
    if (!config.apiKey) return apiError(res, 503, 'api_error', 'Dipper has no model key: set DIPPER_MODEL_API_KEY or DIPPER_MODEL_API_KEY_FILE.');
    const spent = req.path === '/v1/messages' && budgetSpent ? await budgetSpent(res).catch(() => undefined) : null;
    // The usage could not be read: refused as the endpoint's overload is, which the client retries.
    if (spent === undefined) return apiError(res, 529, 'overloaded_error', 'Dipper could not read this agent\'s model usage; try again.');
    if (spent) {
      const whose = spent.budget === 'run' ? "the run's" : "this agent's";
      return apiError(res, 403, 'permission_error', `Dipper stopped this agent: ${whose} ${spent.measure} budget is spent (${spent.used} used of ${spent.limit}).`);
    }
    const headers: Record<string, string> = { 'x-api-key': config.apiKey };
    for (const name of PASSED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let upstream: globalThis.Response;
    try {
      upstream = await fetch(`${config.upstreamUrl}${req.path}`, { method: 'POST', headers, body: req.body as Buffer, signal: abort.signal });
    } catch {
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
    if (req.path === '/v1/messages' && upstream.ok) await onUsage(callerOf(res), tally.total()).catch(() => undefined);
    res.end();
  });
  router.use((_req: Request, res: Response) => apiError(res, 404, 'not_found_error', 'Dipper\'s model proxy serves POST /v1/messages and /v1/messages/count_tokens.'));
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
