import { ContentKeeper } from './content';
import { createServer } from 'node:http';
import { openStores } from '../common/stores';
import { Wakeups } from './wakeups';
import { ProcessMetrics } from '../metrics/temporalCalls';
import { Drain } from './drain';
import { DecisionKeys } from '../auth/decisionKeys';
import { auditKey, loadOrCreateSecrets } from '../auth/secrets';
import { taskApiClient } from '../common/taskApi';
import { isphereService } from '../isphere/service';
import { openAuditStore } from '../common/stores/audit';
import { TaskBoard } from './taskBoard';
import { temporalTarget, type DipperConfig } from '../config';
import { createLogger } from '../log';
import { SkillCatalog } from '../skills';
import { createApp } from './app';
import { loadOperators } from '../auth/operators';
import { RevocationView, TemporalRevocationSource } from './revocations';
import { TeamClient } from './teamClient';
import { Temporal } from '../temporal';

export interface GatewayHandle {
  url: string;
  close(): Promise<void>;
}

/**
 * Timeouts for receiving a request, so a client that sends headers or a body
 * slower than promised (or never finishes) cannot hold a connection for
 * Node's defaults (60 s, 300 s). They cover only the request: Node stops the
 * clock once the request is in, so a long poll's wait for its answer is
 * never cut. Connections are checked every second instead of every 30 s so
 * the timeouts hold to about a second.
 *
 * An idle keep-alive connection is kept 65 s, not Node's 5 s: clients close
 * theirs a little before the time the server announces, and on a busy
 * machine a client's timer runs late, so it sent a request down a
 * connection the server had just closed ("fetch failed" in a loaded test
 * run). With a long server timeout the client is always the one to close.
 */
function serverOptions(config: DipperConfig): Parameters<typeof createServer>[0] {
  return {
    headersTimeout: config.guards.headersTimeoutMs,
    requestTimeout: config.guards.requestTimeoutMs,
    keepAliveTimeout: 65_000,
    connectionsCheckingInterval: 1000,
  };
}

/** Starts the HTTP gateway: MCP endpoints, the runtime inbox and the operator API. */
export async function startGateway(config: DipperConfig): Promise<GatewayHandle> {
  const log = createLogger(config, 'gateway');
  const secrets = loadOrCreateSecrets(config);
  const metrics = new ProcessMetrics('gateway');
  const temporal = await Temporal.connect({
    ...temporalTarget(config),
    namespace: config.temporal.namespace,
    workflowTaskTimeoutMs: config.temporal.workflowTaskTimeoutMs,
    policy: { callTimeoutMs: config.guards.callTimeoutMs, stickyTimeoutMs: config.temporal.stickyTimeoutMs },
    metrics,
    // gRPC's default reconnect backoff grows to two minutes: after a long outage the gateway would answer
    // `unavailable` that long after Temporal is back. Five seconds at most keeps recovery prompt.
    channelArgs: { 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5000 },
  });
  const stores = await openStores(config);
  const { events, content } = stores;
  const key = auditKey(config, secrets);
  const audit = { store: await openAuditStore(config, key), key, witness: config.isphere.auditWitness };
  metrics.timeAppends('events', events);
  metrics.timeAppends('audit', audit.store);
  const revocations = new RevocationView(
    // A slow answer still counts (it is dated when asked): cut off at 1 s, a loaded host whose Queries took longer never refreshed.
    new TemporalRevocationSource(temporal, config.temporal.taskQueue, Math.max(1000, config.revocation.staleMs - config.revocation.refreshMs)),
    { ...config.revocation, tokenTtlSeconds: config.tokenTtlSeconds },
    log,
    stores.revoked,
  );
  await revocations.start();
  const wakeups = new Wakeups(stores.wakes);
  await wakeups.start();
  const decisions = new DecisionKeys([secrets.tokenSecret, ...config.previousTokenSecrets]);
  const team = new TeamClient(temporal, log, metrics);
  const drain = new Drain();
  const app = createApp({
    drain,
    config,
    operators: loadOperators(secrets.operatorToken, config.operators),
    tokenSecrets: [secrets.tokenSecret, ...config.previousTokenSecrets],
    tokenSecret: secrets.tokenSecret,
    revocations,
    revoked: stores.revoked,
    team,
    tasks: new TaskBoard(taskApiClient(config, secrets), team, config.guards.callTimeoutMs, config.taskApi.resultBudgetBytes),
    isphere: isphereService(config.isphere, team, config.temporal.taskQueue, decisions.publicKeys),
    decisions,
    audit,
    skills: new SkillCatalog(config.skillsDir),
    events,
    content: new ContentKeeper(content),
    wakeups,
    metrics,
    log,
  });
  const server = createServer(serverOptions(config), app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port }, 'gateway listening');
  return {
    url: `http://${config.host}:${port}`,
    close: async () => {
      // No new connections; idle keep-alive ones go now, and the calls in flight get the drain's time to answer.
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      const left = await drain.start(config.drainMs);
      if (left > 0) log.info({ left }, 'drain over; cutting the requests still open (long polls, waits for a person: their clients ask again)');
      server.closeAllConnections();
      await closed;
      revocations.stop();
      await wakeups.stop();
      await audit.store.close();
      await stores.close();
      await temporal.close();
    },
  };
}
