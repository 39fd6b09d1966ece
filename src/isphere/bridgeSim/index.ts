import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBridgeSimApp, type BridgeSimAppOptions } from './app';

export { createBridgeSimApp, type BridgeSimAppOptions } from './app';
export { defaultSeed } from './defaultSeed';
export type { SimSeed } from './types';

export interface BridgeSimOptions extends BridgeSimAppOptions {
  /** Default 127.0.0.1: a bridge sits beside one person's client and has no reason to be reachable from elsewhere. */
  host?: string;
  /** 0 (the default) takes any free port; the answer's url says which. */
  port?: number;
}

export interface RunningBridgeSim {
  url: string;
  close(): Promise<void>;
}

/** Serves the simulated iSphere bridge over HTTP until close(). */
export async function startBridgeSim(opts: BridgeSimOptions): Promise<RunningBridgeSim> {
  const server = http.createServer(createBridgeSimApp(opts));
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
        // Keep-alive connections (and requests held by a delay fault) would hold close() open.
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
