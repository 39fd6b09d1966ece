import http from 'node:http';
import net from 'node:net';
import type { Logger } from 'pino';
import type { ProcessMetrics } from '../metrics/temporalCalls';

/** A free port on the loopback, for the SDK core's own exporter, which only this process reads. */
export function loopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The worker's page for Prometheus and for a supervisor: `/metrics` is
 * Dipper's own figures followed by the Temporal SDK core's (workflow task
 * latency and failures, slots, polls), read from its exporter on the
 * loopback, so one scrape has both; `/healthz` answers 200 while every
 * queue of this worker is polled and 503 otherwise. Neither holds any
 * run's data, so neither asks for a token.
 */
export async function serveWorkerMetrics(o: { host: string; port: number; metrics: ProcessMetrics; corePort?: number; polling: () => boolean; log?: Logger }): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.method !== 'GET') return void res.writeHead(405, { Allow: 'GET' }).end();
      if (req.url === '/healthz') {
        const polling = o.polling();
        return void res.writeHead(polling ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: polling, polling }));
      }
      if (req.url !== '/metrics') return void res.writeHead(404).end();
      const [own, core] = await Promise.all([o.metrics.text(), coreText(o.corePort)]);
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`${own}\n${core}`);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  o.log?.info({ port }, 'worker metrics and health served');
  return { port, close: () => new Promise((r) => server.close(() => r())) };
}

async function coreText(port: number | undefined): Promise<string> {
  if (port === undefined) return '';
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.text() : '';
  } catch {
    return '';
  }
}
