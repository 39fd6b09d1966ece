import { hostQueue } from '../../workflows/ids';
import fs from 'node:fs';
import path from 'node:path';
import { ProcessMetrics } from '../metrics/temporalCalls';
import { serveWorkerMetrics } from './metricsServer';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { openStores } from '../common/stores';
import { openAuditStore } from '../common/stores/audit';
import { createIsphereActivities } from '../../activities/isphere/send';
import { AgentAccounts, checkAccountsSupport } from '../../activities/runtimes/accounts';
import { fenceTable, putUpFence } from '../../activities/runtimes/netFence';
import { fenceClaims, resolveAutoUsers } from '../../activities/runtimes/uidClaims';
import { CommandRuntime } from '../../activities/runtimes/command';
import { runtimeExitedSignal } from '../../workflows/agent/messages';
import { agentWorkflowId } from '../../workflows/ids';
import { tokenRegistryQueue } from '../common/pure/revocations';
import { ensureTokenRegistry } from '../auth/revoke';
import { tokenRegistryWorkflow } from '../../workflows/tokens/registry';
import { DecisionKeys } from '../auth/decisionKeys';
import { auditKey, loadOrCreateSecrets } from '../auth/secrets';
import { isolatesAgents, temporalTarget, type DipperConfig } from '../config';
import { sdkTls } from '../temporal/tls';
import type { Logger } from '../log';
import { SkillCatalog } from '../skills';
import { startContentSweeper } from './contentSweeper';
import { startStallWatch } from './stallWatch';
import { checkServer } from './serverCheck';
import { speedUpWorkflowThreads } from './workflowThreads';
import { Temporal, TemporalAdmin } from '../temporal';
import { workflowBundleOptions } from './bundle';
import { startPromotion } from '../versioning/promote';
import { workerVersioning } from '../versioning/worker';

export interface WorkerHandle {
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Activities one worker runs at once (the SDK's default is 100). */
const ACTIVITY_SLOTS = 2000;

/**
 * Builds the Dipper worker: every workflow and activity on one task queue.
 * workflowBundlePath lets tests and benchmarks reuse one prebuilt bundle.
 */
export async function createDipperWorker(
  config: DipperConfig,
  opts: { workflowBundlePath?: string; tuning?: Partial<WorkerOptions>; log?: Logger; onStarted?: () => void; corePort?: number } = {},
): Promise<WorkerHandle> {
  const target = temporalTarget(config);
  const { address } = target;
  // "auto" users become this data folder's own ranges before anything reads a runtime's user.
  resolveAutoUsers(config.runtimes, config.dataDir, fenceClaims(fenceTable(config.dataDir)));
  const runtimes = [config.runtimes.default, ...Object.values(config.runtimes.bySkill)];
  // Checked before anything starts: a host that cannot switch users says so once, not at every launch.
  const accounts = isolatesAgents(config.runtimes) ? new AgentAccounts(config.dataDir, checkAccountsSupport(runtimes, config.agentGroupIds, config.dataDir)) : undefined;
  // Before any agent can start: agents that run as other users reach only the gateway and their runtime's destinations.
  const fence = await putUpFence(runtimes, config.publicUrl, config.dataDir);
  if (fence) opts.log?.info({ table: fence }, 'agents fenced off the network');
  const secrets = loadOrCreateSecrets(config);
  const metrics = new ProcessMetrics('worker');
  const stores = await openStores(config);
  const { events, content } = stores;
  const audit = await openAuditStore(config, auditKey(config, secrets));
  metrics.timeAppends('events', events);
  metrics.timeAppends('audit', audit);
  const runtimeExits = metrics.counter('dipper_runtime_exits_total', 'Agent processes of this worker that ended, stopped by Dipper or not (a crash is also an agent_crashed event): with dipper_runtime_processes, the churn of agent processes.');
  // Activities run under their own timeouts, so no call deadline here; their Queries are capped and Updates retried.
  const temporal = await Temporal.connect({
    ...target,
    namespace: config.temporal.namespace,
    workflowTaskTimeoutMs: config.temporal.workflowTaskTimeoutMs,
    policy: { stickyTimeoutMs: config.temporal.stickyTimeoutMs },
  });
  const commands = new CommandRuntime((who, exit) => {
    runtimeExits.inc();
    temporal
      .handle(agentWorkflowId(who.run_id, who.agent_id))
      .signal(runtimeExitedSignal, exit)
      .catch(() => undefined);
  }, config.maxRuntimeProcesses);
  commands.adoptAll(path.join(config.dataDir, 'runs'));
  metrics.gauge('dipper_runtime_processes', 'Agent processes this worker runs (command and claude runtimes).', () => commands.running());
  // Before any Worker.create: the workflow threads it starts load the preload (src/worker/workflowThreads.ts).
  const fast = config.temporal.fastActivations && opts.log ? speedUpWorkflowThreads(opts.log) : undefined;
  const connection = await NativeConnection.connect({ address, ...sdkTls(target.tls) });
  // The server's side of worker versioning: this build's promotion (src/versioning/promote.ts).
  const admin = await TemporalAdmin.connect(target);
  // Built once, for both workers (each bundling its own took twice as long to start).
  const workflowBundle = opts.workflowBundlePath
    ? { codePath: opts.workflowBundlePath }
    : {
        code: (
          await bundleWorkflowCode(workflowBundleOptions({ logger: opts.log ? bundlerLogger(opts.log) : undefined }))
        ).code,
      };
  const bundle = { workflowBundle };
  // Every queue this process polls belongs to one version of the code (src/versioning/worker.ts).
  const versioning = workerVersioning(config.versioning, workflowBundle.code ?? fs.readFileSync(workflowBundle.codePath!));
  // The token registry's own queue, with no cache: any live worker answers its Queries (workflows/tokens/registry.ts).
  const registryWorker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: tokenRegistryQueue(config.temporal.taskQueue),
    maxCachedWorkflows: 0,
    ...bundle,
    ...versioning.options,
  });
  const activities = {
    ...createActivities({
      config,
      tokenSecret: secrets.tokenSecret,
      temporal,
      events,
      revoked: stores.revoked,
      wakes: stores.wakes,
      content,
      skills: new SkillCatalog(config.skillsDir),
      commands,
      accounts,
    }),
    ...createIsphereActivities({ config, audit, events, content, decisionKeys: new DecisionKeys([secrets.tokenSecret, ...config.previousTokenSecrets]).publicKeys }),
  };
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    stickyQueueScheduleToStartTimeout: config.temporal.stickyTimeoutMs,
    maxConcurrentWorkflowTaskExecutions: config.temporal.workflowTaskSlots,
    workflowThreadPoolSize: config.temporal.workflowThreads,
    ...bundle,
    activities,
    // Each leader holds one slot for its hour-long workspace watch (mostly asleep): room for many leaders per worker.
    maxConcurrentActivityTaskExecutions: ACTIVITY_SLOTS,
    ...versioning.options,
    ...opts.tuning,
  });
  // A worker that names its host also serves that host's queue, where pinned runs send their file and process work.
  const hostWorker = config.hostId
    ? await Worker.create({ connection, namespace: config.temporal.namespace, taskQueue: hostQueue(config.temporal.taskQueue, config.hostId), activities, maxConcurrentActivityTaskExecutions: ACTIVITY_SLOTS, ...versioning.options })
    : undefined;
  return {
    run: async () => {
      try {
        // Beside polling: the new registry's first workflow task then runs on this worker.
        const ensured = ensureTokenRegistry(temporal, tokenRegistryWorkflow, config).catch(() => undefined);
        // Beside polling: what this server's release leaves off, said once.
        const serverChecked = opts.log ? checkServer(() => admin.serverVersion(), opts.log).catch(() => undefined) : undefined;
        // Beside polling too: a version exists on the server once its first poller arrives.
        const { version } = versioning;
        if (version) opts.log?.info({ ...version, promote: config.versioning.promote }, 'worker version');
        const promotion = version ? startPromotion({ admin, namespace: config.temporal.namespace, version, mode: config.versioning.promote, log: opts.log }) : undefined;
        // Started once the server was checked and this version settled: what those say belongs to the start-up.
        void Promise.all([serverChecked, promotion?.settled]).then(() => opts.onStarted?.());
        const stopSweeping = opts.log ? startContentSweeper(content, temporal, { retentionMs: config.content.retentionMs, everyMs: config.content.sweepMs }, opts.log) : undefined;
        const stopWatching = opts.log
          ? startStallWatch(
              [
                { queue: config.temporal.taskQueue, status: () => worker.getStatus() },
                { queue: tokenRegistryQueue(config.temporal.taskQueue), status: () => registryWorker.getStatus() },
              ],
              opts.log,
            )
          : undefined;
        const polling = () => [worker, registryWorker, hostWorker].every((w) => !w || w.getState() === 'RUNNING');
        const page =
          config.workerMetricsPort !== undefined
            ? await serveWorkerMetrics({ host: config.host, port: config.workerMetricsPort, metrics, corePort: opts.corePort, polling, log: opts.log })
            : undefined;
        await Promise.all([worker.run(), registryWorker.run(), hostWorker?.run()]).finally(() => {
          void page?.close();
          stopWatching?.();
          stopSweeping?.();
          fast?.stop();
          promotion?.stop();
        });
        await ensured;
      } finally {
        await audit.close();
        await stores.close();
        await connection.close();
        await temporal.close();
        await admin.close();
      }
    },
    shutdown: async () => {
      worker.shutdown();
      registryWorker.shutdown();
      hostWorker?.shutdown();
    },
  };
}

/** The bundler's chatter goes to debug; its warnings and errors stay what they are. */
function bundlerLogger(log: Logger) {
  const at = (level: 'debug' | 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) => log[level](meta ?? {}, message);
  const debug = at('debug');
  return {
    log: (level: string, message: string, meta?: Record<string, unknown>) => (level === 'WARN' ? at('warn') : level === 'ERROR' ? at('error') : debug)(message, meta),
    trace: debug,
    debug,
    info: debug,
    warn: at('warn'),
    error: at('error'),
  };
}
