import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyOf, forward } from './forward';

/**
 * A proxy in front of an HTTP service that, while holding, keeps the
 * requests `matches` picks waiting before they reach the service, until
 * release(): a call in flight for exactly as long as a test needs.
 */
export class HoldingProxy {
  private server!: http.Server;
  private holding = false;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  /** Requests held now. */
  held = 0;

  constructor(
    private readonly upstream: string,
    private readonly matches: (method: string, path: string) => boolean,
  ) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  hold(): void {
    this.holding = true;
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.holding = false;
    this.open();
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await bodyOf(req);
    const path = req.url ?? '/';
    if (this.holding && this.matches(req.method ?? 'GET', path.split('?')[0])) {
      this.held++;
      await this.gate;
      this.held--;
    }
    const answer = await forward(this.upstream, req, body);
    // Bytes as they came (a file's content is not text).
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  }
}
