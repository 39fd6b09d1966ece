import { createHash } from 'node:crypto';
import { startBridgeSim, type BridgeSimOptions } from '../../../src/isphere/bridgeSim';

export const BRIDGE = 'bridge-token-for-tests-0123456789';
export const CONTROL = 'control-token-for-tests-9876543210';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

/** A real simulator on a free port, driven over real HTTP with the global fetch. */
export class Sim {
  url = '';
  private closeServer: () => Promise<void> = async () => {};

  async start(opts: Partial<BridgeSimOptions> = {}): Promise<this> {
    const running = await startBridgeSim({ bridgeToken: BRIDGE, controlToken: CONTROL, port: 0, ...opts });
    this.url = running.url;
    this.closeServer = () => running.close();
    return this;
  }

  stop(): Promise<void> {
    return this.closeServer();
  }

  /** `token: null` sends no Authorization header. */
  async request(method: string, path: string, opts: { token?: string | null; body?: unknown; raw?: string } = {}): Promise<Reply> {
    const token = opts.token === undefined ? BRIDGE : opts.token;
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.url + path, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  }

  get(path: string, token?: string | null): Promise<Reply> {
    return this.request('GET', path, { token });
  }

  post(path: string, body: unknown, token?: string | null): Promise<Reply> {
    return this.request('POST', path, { token, body });
  }

  control(path: string, body?: unknown): Promise<Reply> {
    return this.request(body === undefined && path === '/_sim/deliveries' ? 'GET' : 'POST', path, { token: CONTROL, body });
  }

  async deliveries(): Promise<any[]> {
    return (await this.control('/_sim/deliveries')).body.deliveries;
  }

  /** Every item of a list, page by page, failing on any refusal; also returns the number of pages. */
  async all(path: string, params: Record<string, string | number | undefined> = {}): Promise<{ items: any[]; pages: number }> {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const reply = await this.get(withQuery(path, { ...params, ...(cursor ? { cursor } : {}) }));
      if (reply.status !== 200) throw new Error(`${path} answered ${reply.status} ${JSON.stringify(reply.body)}`);
      items.push(...reply.body.items);
      cursor = reply.body.next_cursor;
      pages++;
    } while (cursor);
    return { items, pages };
  }
}

/** GET with query parameters; undefined ones are left out. */
export function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const qs = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) qs.set(key, String(value));
  const text = qs.toString();
  return text ? `${path}?${text}` : path;
}

export const ids = (reply: Reply, field: string): string[] => reply.body.items.map((item: any) => item[field]);

let counter = 0;
/** A client_message_id no other test in this process uses. */
export function freshId(label = 'send'): string {
  counter += 1;
  return `${label}-${process.pid}-${counter}`;
}

/** A valid POST /v1/messages body with a fresh client_message_id. */
export const messageSend = (overrides: Record<string, unknown> = {}) => ({
  client_message_id: freshId('msg'),
  target_type: 'contact',
  target_id: 'c_0001',
  content_text: 'The totals look right to me.',
  ...overrides,
});

/** A valid POST /v1/files body with a fresh client_message_id. */
export const fileSend = (overrides: Record<string, unknown> = {}) => ({
  client_message_id: freshId('file'),
  target_type: 'group',
  target_id: 'g_0001',
  file_name: 'notes.txt',
  content_base64: Buffer.from('hello from Dipper\n').toString('base64'),
  ...overrides,
});

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
