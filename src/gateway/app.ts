import type { DecisionKeys } from '../auth/decisionKeys';
import type { DipperEvent } from '../common/stores/eventStore';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { EventStore } from '../common/stores/eventStore';
import type { AuditStore } from '../common/stores/audit';
import type { OperatorIdentity, Operators } from '../auth/operators';
import { verifyAgentToken } from '../auth/tokens';
import { keepAfter } from '../auth/revoke';
import type { DipperConfig } from '../config';
import type { Logger } from '../log';
import { benchTools, toolsOf } from '../registry';
import type { Caller } from '../registry/capabilities';
import type { Surface } from '../registry/types';
import type { IsphereService } from '../isphere/service';
import type { SkillCatalog } from '../skills';
import type { ContentKeeper } from './content';
import { DeliveryBatcher } from './delivery';
import type { Wakeups } from './wakeups';
import { ActivityMarks } from './activityMarks';
import type { ProcessMetrics } from '../metrics/temporalCalls';
import { bearer, errorHandler, isMcpPath, limitByAddress, limitRate, revoked, unauthorized } from './http';
import { unconfirmed } from '../common/serviceErrors';
import { LongPolls } from './longPolls';
import { watchGateway } from './metrics';
import type { Drain } from './drain';
import { checkOrigin } from './origin';
import { consoleRoutes } from './console';
import { createMcpServer, mcpSurface, type McpSurface } from './mcp';
import type { TaskBoard } from './taskBoard';
import { refuseMalformedArguments, refuseOverRate, refuseUnconfirmed } from './mcpRefusals';
import { operatorRouter } from './operatorApi';
import { approvalWebhook } from './approvalWebhook';
import { RateLimiter } from './rateLimit';
import type { RevocationView } from './revocations';
import type { RevokedTokens } from '../common/stores/revokedTokens';
import { runtimeRouter } from './runtimeApi';
import { runtimeEventsRouter } from './runtimeEvents';
import { modelProxyRouter } from './modelProxy';
import { ModelGate } from './budgets';
import type { TeamClient } from './teamClient';

export interface GatewayDeps {
  config: DipperConfig;
  /** Counts requests in flight and turns new ones away while the gateway stops (src/gateway/drain.ts). */
  drain?: Drain;
  operators: Operators;
  /** The signing secret, then any still accepted during a rotation. */
  tokenSecrets: string[];
  tokenSecret: string;
  revocations: RevocationView;
  /** Where this replica records a revocation it makes true by answering (an agent's end, a relaunch's token, the operator's revoke). */
  revoked: RevokedTokens;
  team: TeamClient;
  skills: SkillCatalog;
  events: EventStore;
  content: ContentKeeper;
  /** Inbox wakes shared with workers and other replicas; started by the caller. */
  wakeups: Wakeups;
  /** This replica's counters, served at /api/metrics. */
  metrics: ProcessMetrics;
  log: Logger;
  /** The task board behind /mcp/agentteam. */
  tasks: TaskBoard;
  /** The iSphere sources and access policy behind /mcp/isphere. */
  isphere: IsphereService;
  /** The iSphere audit chain and its key (the operator API lists and verifies it). */
  audit: { store: AuditStore; key: string };
  /** Signs the decisions people make (src/common/pure/decisionProof.ts). */
  decisions: DecisionKeys;
}

/** The Claude CLI sends its API key as `x-api-key`: at the model proxy that is the agent's token. */
function apiKeyAsBearer(req: Request, _res: Response, next: NextFunction): void {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string' && !req.headers.authorization) req.headers.authorization = `Bearer ${key}`;
  next();
}

/** A tools/call of a tool that waits, with a progress token: answered as an event stream. */
function streamsProgress(surface: McpSurface, body: { method?: unknown; params?: { name?: unknown; _meta?: { progressToken?: unknown } } }): boolean {
  if (body.method !== 'tools/call' || typeof body.params?.name !== 'string') return false;
  return surface.byName.get(body.params.name)?.waits === true && body.params._meta?.progressToken !== undefined;
}

/** When an agent at its cap of calls in flight is told to try again. */
const IN_FLIGHT_RETRY_MS = 200;

/** Calls in flight per key, each let go when its response ends (answered, or the client went away). */
class InFlight {
  private readonly counts = new Map<string, number>();

  constructor(private readonly cap: number) {}

  enter(key: string, res: Response): boolean {
    // A client gone while its request was read has had its 'close' already: counting it would hold a slot for ever.
    if (res.closed || res.req.socket.destroyed) return true;
    const now = this.counts.get(key) ?? 0;
    if (now >= this.cap) return false;
    this.counts.set(key, now + 1);
    res.once('close', () => {
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    });
    return true;
  }
}

/** Room for a 256 KiB message after JSON escaping; the byte limit itself is checked per field. */
const BODY_LIMIT = '2mb';

const callerOf = (res: Response): Caller => res.locals.caller as Caller;

/** A single JSON-RPC 2.0 message; anything else is refused here, before the SDK answers with its internals. */
function isJsonRpc(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

/**
 * MCP 2025-06-18 dropped JSON-RPC batching. A batch is refused whole, before
 * any of it runs: one request of thousands of calls would otherwise hold the
 * gateway for seconds and slip past the per-token rate limit.
 */
const BATCH_REFUSED = {
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them). Send one message per request.' },
  id: null,
};

export function createApp(deps: GatewayDeps): express.Express {
  const { config, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  if (deps.drain) app.use(deps.drain.middleware());

  // Requests that no token's bucket holds (see limitByAddress), one bucket per connection address.
  const addressRate = new RateLimiter(config.guards.addressRate);
  const byAddress = limitByAddress(addressRate, config.guards.trustedProxies);
  /** A refused token costs its address a token too: a flood of bad ones is slowed like any other. */
  const refuseToken = (req: Request, res: Response) => byAddress(req, res, () => unauthorized(res));

  const agentAuth = async (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    const claims = token ? verifyAgentToken(deps.tokenSecrets, token) : null;
    if (!claims) return refuseToken(req, res);
    const verdict = await deps.revocations.check(claims);
    if (verdict === 'revoked') return revoked(res);
    if (verdict === 'unknown') {
      // A tool call is refused in the spec's shape once its body is read (serve() below); anything else here.
      if (isMcpPath(req)) res.locals.unconfirmed = true;
      else return next(unconfirmed());
    }
    res.locals.caller = { runId: claims.run_id, agentId: claims.agent_id } satisfies Caller;
    res.locals.gen = claims.gen;
    next();
  };
  const operatorAuth = (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    const who = token ? deps.operators.identify(token) : undefined;
    if (!who) return refuseToken(req, res);
    res.locals.operator = who;
    next();
  };

  // Browsers may call in only from the gateway's own origin or one the operator allowed (DNS rebinding; MCP transport spec).
  app.use(['/mcp', '/api', '/model'], checkOrigin(config));
  // Not /healthz: behind a load balancer every client shares its address, and a flood there must not fail its health checks.
  app.use(['/console', '/api/console', '/hooks'], byAddress);
  app.use(consoleRoutes(deps));

  app.get('/healthz', (_req, res) => {
    // Stopping: the load balancer takes this replica out before its calls are cut.
    if (deps.drain?.active) res.status(503).json({ ok: false, draining: true });
    else res.json({ ok: true });
  });
  // For Prometheus: kinds and counts only (no run, agent or token), so no token is asked for; the operator API's copy stays.
  app.get('/metrics', async (_req, res) => {
    res.type('text/plain; version=0.0.4').send(await deps.metrics.text());
  });
  // Outside the operator API's token: an approval system signs its requests instead.
  app.use(approvalWebhook(config.isphere, deps.operators, deps.team, deps.decisions, log));

  const { wakeups } = deps;
  const delivery = new DeliveryBatcher(deps.team, wakeups);
  const polls = new LongPolls(config.guards.pollsPerAgent);
  watchGateway(deps.metrics, { polls, revocations: deps.revocations, team: deps.team });
  const agentRate = new RateLimiter(config.guards.agentRate);
  const operatorRate = new RateLimiter(config.guards.operatorRate);
  const inFlight = new InFlight(config.guards.callsPerAgent);
  const marks = new ActivityMarks(deps.team, config.activityMarkMs, log);
  const retireTokens = (caller: Caller) => deps.revoked.record({ runId: caller.runId, agentId: caller.agentId, at: Date.now() }, keepAfter(config));
  const agentKey = (res: Response) => `${callerOf(res).runId}/${callerOf(res).agentId}`;
  const serve = (route: string, surface: McpSurface) => {
    app.post(route, agentAuth, express.json({ limit: BODY_LIMIT }), async (req, res) => {
      if (Array.isArray(req.body)) {
        res.status(400).json(BATCH_REFUSED);
        return;
      }
      if (!isJsonRpc(req.body)) {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: expected a JSON-RPC 2.0 message.' }, id: null });
        return;
      }
      if (res.locals.unconfirmed) {
        refuseUnconfirmed(res, req.body, surface.name as Surface);
        return;
      }
      const wait = agentRate.take(agentKey(res));
      if (wait > 0) {
        refuseOverRate(res, req.body, wait, surface.name as Surface);
        return;
      }
      // On top of the rate, a cap on calls in flight: an agent's flood of slow calls holds only its own slots.
      if (!inFlight.enter(agentKey(res), res)) {
        refuseOverRate(res, req.body, IN_FLIGHT_RETRY_MS, surface.name as Surface, `in flight with this token (${config.guards.callsPerAgent} at once)`);
        return;
      }
      if (refuseMalformedArguments(res, req.body, surface.name as Surface)) return;
      // A client connecting as the agent drives it: the watchdog watches a `none` agent from then on (its first word).
      if ((req.body as { method?: unknown }).method === 'initialize') marks.mark(callerOf(res).runId, callerOf(res).agentId);
      const ctx = {
        caller: callerOf(res),
        team: deps.team,
        delivery,
        content: deps.content,
        wakeups,
        skills: deps.skills,
        limits: config.limits,
        tasks: deps.tasks,
        isphere: deps.isphere,
        checkOutput: config.checkOutputs,
        countDeprecated: (tool: string) => deps.metrics.deprecatedCalls.inc({ tool }),
        recordCall: (surface: string, tool: string, outcome: string, seconds: number) => deps.metrics.toolCall(surface, tool, outcome, seconds),
        questions: { ...config.questions, taskQueue: config.temporal.taskQueue, decisionKeys: deps.decisions.publicKeys },
        recordEvent: (event: DipperEvent) => void deps.events.append([event]).catch(() => undefined),
        activity: () => marks.mark(callerOf(res).runId, callerOf(res).agentId),
      };
      const server = createMcpServer(surface, ctx, log);
      // Stateless: no session id, plain JSON answers, nothing kept after the response.
      // A call that waits (ask_user) and sent a progress token gets a streamed answer, which can carry progress notifications.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streamsProgress(surface, req.body) });
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
  serve('/mcp/agentteam', mcpSurface('agentteam', toolsOf('agentteam')));
  serve('/mcp/isphere', mcpSurface('isphere', toolsOf('isphere')));
  // The no-op floor `npm run bench` measures beidou calls against: same auth, parsing and per-request server.
  if (config.benchSurface) serve('/mcp/bench', mcpSurface('bench', benchTools));

  app.use(
    '/api/runtime',
    agentAuth,
    limitRate(agentRate, agentKey),
    express.json({ limit: BODY_LIMIT }),
    runtimeEventsRouter((events) => deps.events.append(events), deps.team, callerOf, (caller) => marks.mark(caller.runId, caller.agentId)),
    runtimeRouter(deps.team, deps.content, wakeups, polls, callerOf, retireTokens, deps.drain?.signal),
  );
  // A Claude agent's CLI sends its token as an API key; it is an agent's token like any other.
  const modelGate = new ModelGate(config.runtimes, config.model.budgets, deps.events, deps.team, log);
  app.use('/model', apiKeyAsBearer, agentAuth, limitRate(agentRate, agentKey), modelProxyRouter(config.model, callerOf, modelGate));
  // The operator token has a bucket of its own, so agents cannot crowd out the person running them (nor the reverse).
  app.use(
    '/api',
    operatorAuth,
    limitRate(operatorRate, (res) => `operator/${(res.locals.operator as OperatorIdentity).name}`),
    express.json({ limit: BODY_LIMIT }),
    operatorRouter(deps),
  );

  app.use(byAddress, (_req: Request, res: Response) => {
    res.status(404).json({ error: { code: 'not_found', message: 'No such endpoint.' } });
  });
  app.use(errorHandler(log));
  return app;
}
