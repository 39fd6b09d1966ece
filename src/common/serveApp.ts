import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServedApp {
  url: string;
  /** Stops listening and ends open connections (keep-alive ones, or requests a test holds, would hold it open). Safe to call twice. */
  close(): Promise<void>;
}

/** Serves a request handler on host:port (0: any free port) until close(): the reference upstreams' one way to listen. */
export async function serveApp(handler: http.RequestListener, opts: { host?: string; port?: number }): Promise<ServedApp> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
