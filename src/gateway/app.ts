import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { EventStore } from '../../activities/eventStore';
import { sameSecret, verifyAgentToken } from '../auth/tokens';
import type { DipperConfig } from '../config';
import type { Logger } from '../log';
import { benchTools, toolsOf } from '../registry';
import type { Caller } from '../registry/types';
import type { SkillCatalog } from '../skills';
import { DeliveryBatcher } from './delivery';
import { Wakeups } from './wakeups';
import { bearer, errorHandler, unauthorized } from './http';
import { createMcpServer, mcpSurface, type McpSurface } from './mcp';
import { operatorRouter } from './operatorApi';
import { runtimeRouter } from './runtimeApi';
import type { TeamClient } from './teamClient';

export interface GatewayDeps {
  config: DipperConfig;
  operatorToken: string;
  tokenSecret: string;
  team: TeamClient;
  skills: SkillCatalog;
  events: EventStore;
  log: Logger;
}

/** Room for a 256 KiB message after JSON escaping; the byte limit itself is checked per field. */
const BODY_LIMIT = '2mb';

const callerOf = (res: Response): Caller => res.locals.caller as Caller;

/** A JSON-RPC 2.0 message or batch; anything else is refused here, before the SDK answers with its internals. */
function isJsonRpc(body: unknown): boolean {
  const one = (m: unknown) => typeof m === 'object' && m !== null && (m as { jsonrpc?: unknown }).jsonrpc === '2.0';
  return Array.isArray(body) ? body.length > 0 && body.every(one) : one(body);
}

export function createApp(deps: GatewayDeps): express.Express {
  const { config, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');

  const agentAuth = (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    const claims = token ? verifyAgentToken(deps.tokenSecret, token) : null;
    if (!claims) return unauthorized(res);
    res.locals.caller = { runId: claims.run_id, agentId: claims.agent_id } satisfies Caller;
    next();
  };
  const operatorAuth = (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    if (!token || !sameSecret(token, deps.operatorToken)) return unauthorized(res);
    next();
  };

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  const wakeups = new Wakeups();
  const delivery = new DeliveryBatcher(deps.team, wakeups);
  const serve = (route: string, surface: McpSurface) => {
    app.post(route, agentAuth, express.json({ limit: BODY_LIMIT }), async (req, res) => {
      if (!isJsonRpc(req.body)) {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: expected a JSON-RPC 2.0 message.' }, id: null });
        return;
      }
      const ctx = { caller: callerOf(res), team: deps.team, delivery, wakeups, skills: deps.skills, limits: config.limits };
      const server = createMcpServer(surface, ctx, log);
      // Stateless: no session id, plain JSON answers, nothing kept after the response.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
    app.all(route, agentAuth, (_req, res) => {
      res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    });
  };
  serve('/mcp/beidou', mcpSurface('beidou', toolsOf('beidou')));
  // The no-op floor `npm run bench` measures beidou calls against: same auth, parsing and per-request server.
  if (config.benchSurface) serve('/mcp/bench', mcpSurface('bench', benchTools));

  app.use('/api/runtime', agentAuth, express.json({ limit: BODY_LIMIT }), runtimeRouter(deps.team, wakeups, callerOf));
  app.use('/api', operatorAuth, express.json({ limit: BODY_LIMIT }), operatorRouter(deps));

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: { code: 'not_found', message: 'No such endpoint.' } });
  });
  app.use(errorHandler(log));
  return app;
}
