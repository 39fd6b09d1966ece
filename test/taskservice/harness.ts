import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTaskService, type RunningTaskService } from '../../src/taskservice';

export const ADMIN_KEY = 'test-admin-key-0123456789';
export const WS = 'dipper';

export interface Reply {
  status: number;
  body: any;
}

/**
 * A real service on a free port with its own SQLite file, and a clock the
 * test can move forward (token expiry) without sleeping.
 */
export class Harness {
  /** Added to the real clock; moves tokens towards expiry. */
  skewMs = 0;
  /** When set, the service's clock stands still at this instant. */
  frozenAt: number | null = null;
  service!: RunningTaskService;
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskservice-'));
  readonly dbFile = path.join(this.dir, 'tasks.db');

  async start(): Promise<this> {
    this.service = await startTaskService({
      dbFile: this.dbFile,
      port: 0,
      adminKey: ADMIN_KEY,
      now: () => this.frozenAt ?? Date.now() + this.skewMs,
      log: () => {},
    });
    return this;
  }

  async restart(): Promise<void> {
    await this.service.close();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.service.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  async request(method: string, route: string, opts: { token?: string; body?: unknown; raw?: string } = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.service.url + route, {
      method,
      headers,
      body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  issue(agent: string, channels: string[], extra: { ttlSeconds?: number; ws?: string } = {}): Promise<Reply> {
    return this.request('POST', `/api/v1/workspaces/${extra.ws ?? WS}/agents/${agent}/tokens`, {
      token: ADMIN_KEY,
      body: { channels, ...(extra.ttlSeconds ? { ttlSeconds: extra.ttlSeconds } : {}) },
    });
  }

  async agent(agent: string, channels: string[], ws = WS): Promise<Agent> {
    const reply = await this.issue(agent, channels, { ws });
    if (reply.status !== 200) throw new Error(`token issue failed: ${JSON.stringify(reply.body)}`);
    return new Agent(this, ws, agent, reply.body.token);
  }

  events(after = 0, ws = WS): Promise<Reply> {
    return this.request('GET', `/api/v1/workspaces/${ws}/events?after=${after}`, { token: ADMIN_KEY });
  }
}

/** One agent's view of the runtime routes, with its token. */
export class Agent {
  constructor(
    readonly harness: Harness,
    readonly ws: string,
    readonly id: string,
    public token: string,
  ) {}

  get base(): string {
    return `/api/v1/workspaces/${this.ws}/agents/${this.id}/runtime/tasks`;
  }

  post(op: '' | 'get' | 'update' | 'set-claim' | 'add-checkpoint' | 'delete', body: unknown): Promise<Reply> {
    return this.harness.request('POST', op ? `${this.base}/${op}` : this.base, { token: this.token, body });
  }

  /** GET task_list; parameters left undefined are not sent. */
  list(params: Record<string, string | number | undefined>): Promise<Reply> {
    const qs = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) qs.set(key, String(value));
    return this.harness.request('GET', `${this.base}?${qs}`, { token: this.token });
  }

  /** Creates tasks and returns their numbers, failing the test on any refusal. */
  async create(body: Record<string, unknown>): Promise<number[]> {
    const reply = await this.post('', body);
    if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body.tasks.map((t: { number: number }) => t.number);
  }

  async get(channel: string, number: number): Promise<any> {
    const reply = await this.post('get', { channel, number });
    if (reply.status !== 200) throw new Error(`get failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  }
}

export function titles(...names: string[]): { title: string }[] {
  return names.map((title) => ({ title }));
}
