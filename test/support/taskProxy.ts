import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyOf, forward } from './forward';

export interface Seen {
  method: string;
  path: string;
  bearer: string | undefined;
  status?: number;
}

/**
 * A proxy in front of the Task service that records every request and can
 * misbehave once on cue: answer 401 without forwarding (a token expired at
 * the service), or forward a request and never answer (it took effect, and
 * nobody hears so).
 */
export class TaskProxy {
  readonly seen: Seen[] = [];
  private server!: http.Server;
  private refuseNext = 0;
  private hangNext: string | null = null;
  private readonly held = new Set<http.ServerResponse>();

  constructor(private readonly upstream: string) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next `count` runtime requests get 401, as if their token had expired. */
  expireNext(count = 1): void {
    this.refuseNext = count;
  }

  /** The next request whose path ends with `suffix` reaches the service, but its answer is never sent. */
  swallowNext(suffix: string): void {
    this.hangNext = suffix;
  }

  runtime(): Seen[] {
    return this.seen.filter((s) => s.path.includes('/runtime/'));
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sent = await bodyOf(req);
    const path = req.url ?? '/';
    const seen: Seen = { method: req.method ?? 'GET', path, bearer: req.headers.authorization?.replace(/^Bearer /, '') };
    this.seen.push(seen);
    if (this.refuseNext > 0 && path.includes('/runtime/')) {
      this.refuseNext--;
      seen.status = 401;
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'token_expired', message: 'Token expired.' } }));
      return;
    }
    const swallow = this.hangNext !== null && path.split('?')[0].endsWith(this.hangNext) && req.method === 'POST';
    if (swallow) this.hangNext = null;
    const answer = await forward(this.upstream, req, sent);
    const body = await answer.text();
    seen.status = answer.status;
    if (swallow) {
      this.held.add(res);
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
  }
}
