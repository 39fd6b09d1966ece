import express, { type NextFunction, type Request, type Response } from 'express';
import { controlRoutes } from './controls';
import { defaultSeed } from './defaultSeed';
import { asBridgeError, BridgeError } from './errors';
import { bridgeRoutes } from './routes';
import { SimState } from './state';
import type { SimSeed } from './types';

export interface BridgeSimAppOptions {
  /** What a connector presents (DIPPER_ISPHERE_BRIDGE_TOKEN). */
  bridgeToken: string;
  /** What tests and the demo present to /_sim/; must differ from the bridge token. */
  controlToken: string;
  /** Default: defaultSeed(). */
  seed?: SimSeed;
  /** The clock of accepted sends, in ms. */
  now?: () => number;
  /** Whether a person is logged in at start and after a reset; default true. */
  loggedIn?: boolean;
}

/** The simulated bridge as an express app; startBridgeSim serves it over HTTP. */
export function createBridgeSimApp(opts: BridgeSimAppOptions): express.Express {
  if (!opts.bridgeToken || !opts.controlToken) throw new Error('the bridge simulator needs a bridge token and a control token');
  // The controls are safe from connectors only while their token is not one a connector holds.
  if (opts.bridgeToken === opts.controlToken) throw new Error('the control token must differ from the bridge token');
  const state = new SimState(opts.seed ?? defaultSeed(), opts.loggedIn ?? true);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Plain query strings: a repeated parameter becomes an array (and is refused), never a nested object.
  app.set('query parser', 'simple');
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.use(bridgeRoutes(state, opts.bridgeToken, opts.now ?? Date.now));
  app.use('/_sim', controlRoutes(state, opts.controlToken, opts.now ?? Date.now));
  app.use((req: Request) => {
    throw new BridgeError(404, 'not_found', `No route ${req.method} ${req.path}.`);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const failure = asBridgeError(err, req.path);
    if (failure.status >= 500 && failure.code === 'internal_error') {
      process.stderr.write(`isphere bridge simulator: ${req.method} ${req.path} failed: ${err instanceof Error ? err.message : 'unknown error'}\n`);
    }
    if (res.headersSent || req.socket.destroyed) return;
    if (failure.status === 401) res.set('WWW-Authenticate', 'Bearer');
    res.status(failure.status).json(failure.body());
  });
  return app;
}
