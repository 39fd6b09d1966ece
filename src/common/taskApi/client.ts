import { AgentTokens, type TokenRoutes } from './tokens';

/** The seven operations of the Agent Runtime Task API (task-tools-contract.md 13.3). */
export type TaskOp = 'list' | 'get' | 'create' | 'update' | 'checkpoint' | 'set_claim' | 'delete';

const ROUTES: Record<TaskOp, { method: 'GET' | 'POST'; path: string }> = {
  list: { method: 'GET', path: '' },
  get: { method: 'POST', path: '/get' },
  create: { method: 'POST', path: '' },
  update: { method: 'POST', path: '/update' },
  checkpoint: { method: 'POST', path: '/add-checkpoint' },
  set_claim: { method: 'POST', path: '/set-claim' },
  delete: { method: 'POST', path: '/delete' },
};

export const MUTATIONS: readonly TaskOp[] = ['create', 'update', 'checkpoint', 'set_claim', 'delete'];

/** Who a request is made for: the Dipper agent, and the boards its token must reach. */
export interface TaskAgent {
  agentId: string;
  channels: string[];
}

export interface TaskRequest {
  op: TaskOp;
  agent: TaskAgent;
  /** The JSON body; for `list`, the query parameters. */
  body: Record<string, unknown>;
}

export interface ServiceError {
  code: string;
  message: string;
  field?: string;
  details?: Record<string, unknown>;
}

/** What the service answered: its body, or its error. */
export type TaskAnswer = { ok: true; status: number; body: unknown } | { ok: false; status: number; error: ServiceError };

/** Nothing reached the service (refused connection, unknown host): sending again is safe. */
export class NotSent extends Error {}
/** The request may have reached the service and no answer came: whether it took effect is unknown. */
export class OutcomeUnknown extends Error {}

export interface TaskApiOptions {
  baseUrl: string;
  workspace: string;
  adminKey: string;
  requestTimeoutMs: number;
}

/**
 * The one client of the Task API, used by the worker's activities
 * (mutations) and the gateway (reads). Each call is one operation request
 * made with the agent's own token; a 401 refreshes that token once and
 * makes the same request once more. It never sends another credential.
 */
export class TaskApiClient {
  private readonly tokens: AgentTokens;

  constructor(private readonly opts: TaskApiOptions) {
    this.tokens = new AgentTokens(new HttpTokenRoutes(opts), opts.workspace);
  }

  /** `timeoutMs` shortens the request's own deadline, e.g. to end before the tool call that makes it must answer. */
  async request(req: TaskRequest, timeoutMs = this.opts.requestTimeoutMs): Promise<TaskAnswer> {
    if (!req.agent.agentId || !this.opts.workspace) throw new MissingCredentialContext();
    const until = Date.now() + Math.min(timeoutMs, this.opts.requestTimeoutMs);
    const first = await this.send(req, await this.tokens.tokenFor(req.agent), until);
    if (first.status !== 401) return first;
    return this.send(req, await this.tokens.refresh(req.agent), until);
  }

  private async send(req: TaskRequest, token: string, until: number): Promise<TaskAnswer> {
    const route = ROUTES[req.op];
    let url = `${this.base(req.agent.agentId)}${route.path}`;
    if (route.method === 'GET') url += `?${new URLSearchParams(queryOf(req.body))}`;
    const res = await exchange(url, {
      method: route.method,
      headers: { authorization: `Bearer ${token}`, ...(route.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: route.method === 'POST' ? JSON.stringify(req.body) : undefined,
      timeoutMs: Math.max(1, until - Date.now()),
    });
    return answerOf(res.status, res.body);
  }

  private base(agentId: string): string {
    return `${this.opts.baseUrl}/api/v1/workspaces/${encodeURIComponent(this.opts.workspace)}/agents/${encodeURIComponent(agentId)}/runtime/tasks`;
  }
}

/** Workspace or agent unknown: refused here, before any request leaves. */
export class MissingCredentialContext extends Error {}

function queryOf(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (v !== undefined && v !== null) out[k] = String(v);
  return out;
}

function answerOf(status: number, body: unknown): TaskAnswer {
  if (status >= 200 && status < 300) return { ok: true, status, body };
  const err = (body as { error?: Partial<ServiceError> } | null)?.error;
  const code = typeof err?.code === 'string' && /^[a-z0-9_]{1,64}$/.test(err.code) ? err.code : `http_${status}`;
  return {
    ok: false,
    status,
    error: {
      code,
      message: typeof err?.message === 'string' ? err.message.slice(0, 500) : `The Task service answered HTTP ${status}.`,
      field: typeof err?.field === 'string' ? err.field : undefined,
      details: err?.details && typeof err.details === 'object' ? err.details : undefined,
    },
  };
}

/** One HTTP exchange with a deadline, telling "never sent" from "sent, no answer". */
export async function exchange(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, { method: init.method, headers: init.headers, body: init.body, signal: AbortSignal.timeout(init.timeoutMs) });
  } catch (err) {
    throw neverSent(err) ? new NotSent('the Task service could not be reached') : new OutcomeUnknown('the Task service gave no answer');
  }
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // A body that is not JSON: the status still says what happened.
  }
  return { status: res.status, body };
}

/** Connection refused or a name that does not resolve: the request never left this host. */
function neverSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

class HttpTokenRoutes implements TokenRoutes {
  constructor(private readonly opts: TaskApiOptions) {}

  issue(agentId: string, channels: string[]) {
    return this.call(`${this.agentBase(agentId)}/tokens`, { channels }, this.opts.adminKey);
  }

  refresh(agentId: string, refreshToken: string) {
    return this.call(`${this.agentBase(agentId)}/tokens/refresh`, { refreshToken });
  }

  private agentBase(agentId: string): string {
    return `${this.opts.baseUrl}/api/v1/workspaces/${encodeURIComponent(this.opts.workspace)}/agents/${encodeURIComponent(agentId)}`;
  }

  private async call(url: string, body: unknown, bearer?: string) {
    const res = await exchange(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: JSON.stringify(body),
      timeoutMs: this.opts.requestTimeoutMs,
    });
    const pair = res.body as { token?: unknown; refreshToken?: unknown; expiresAt?: unknown } | null;
    if (res.status !== 200 || typeof pair?.token !== 'string' || typeof pair.refreshToken !== 'string') return null;
    return { token: pair.token, refreshToken: pair.refreshToken, expiresAt: Date.parse(String(pair.expiresAt)) || 0 };
  }
}
