import { serveApp } from '../../common/serveApp';
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
  return serveApp(createBridgeSimApp(opts), opts);
}
