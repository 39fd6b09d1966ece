import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeWorkflowBundle } from '../../src/devstack/bundle';
import { startDevServer } from '../../src/devstack/devServer';
import { removeStaleRunFolders } from '../../src/devstack/scratch';
import { isListening } from '../../src/devstack/processes';
import { projectRoot, startProcess, waitForHttp } from '../support/processes';
import type { ClusterRecord } from '../../src/cluster/cluster';
import { writeTestEnv } from './env';
import { defaultSeed } from '../../src/isphere/bridgeSim/defaultSeed';
import { exportSeed } from '../../src/isphere/localStore/export';
import { watchStrayRejections } from './strayRejections';
import { startReplayAlong, type ReplayAlong } from './replayAlongProcess';

export interface Started {
  stop(): Promise<void>;
  /** The replay beside the tests: the end-of-run replay skips what it already did. */
  replayAlong: ReplayAlong;
}

/**
 * Starts what every test file talks to: a real Temporal dev server (in
 * memory, on test ports), the workflow bundle (built once), and the worker
 * and gateway as separate processes, exactly as `npm start` runs them.
 */
export default async function globalSetup(): Promise<void> {
  watchStrayRejections();
  removeStaleRunFolders(path.join(projectRoot, '.test-data'));
  const testDataRoot = path.join(projectRoot, '.test-data', `run-${process.pid}`);
  process.env.DIPPER_TEST_DATA = testDataRoot;
  const dataDir = path.join(testDataRoot, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const temporalPort = Number(process.env.DIPPER_TEST_TEMPORAL_PORT ?? 27233);
  const gatewayPort = Number(process.env.DIPPER_TEST_GATEWAY_PORT ?? 28710);
  // A gateway left behind by a run that crashed would answer every test with its own tokens (401s that say nothing).
  if (await isListening(gatewayPort)) {
    throw new Error(`Port ${gatewayPort} is in use: another jest run, or a gateway a crashed one left behind (DIPPER_TEST_GATEWAY_PORT picks another)`);
  }

  // `dipper cluster test`: the cluster's Temporal server (built from its Go module) and PostgreSQL instead of the dev
  // server and SQLite files; the test stack's own worker and gateway run on them.
  const cluster = process.env.DIPPER_TEST_CLUSTER ? (JSON.parse(fs.readFileSync(process.env.DIPPER_TEST_CLUSTER, 'utf8')) as ClusterRecord) : undefined;
  const server = cluster
    ? { address: cluster.temporalAddress, pid: cluster.pids.temporal, stop: async () => {} }
    : await startDevServer({
        projectRoot,
        port: temporalPort,
        uiPort: temporalPort + 1000,
        headless: true,
        logFile: path.join(testDataRoot, 'temporal.log'),
      });

  const bundlePath = path.join(testDataRoot, 'workflow-bundle.js');
  // A setup that fails takes down what it started, so nothing holds the next run's ports (the logs stay). What can
  // fail before the processes below start is done here, before them.
  await writeWorkflowBundle(bundlePath).catch(async (err: unknown) => {
    await server.stop();
    throw err;
  });

  const operatorToken = `dpo_test_${crypto.randomBytes(12).toString('hex')}`;
  const tokenSecret = crypto.randomBytes(32).toString('hex');
  const skillsDir = path.join(projectRoot, 'test', 'fixtures', 'skills');
  const processEnv: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'dipper',
    DIPPER_DATA_DIR: dataDir,
    DIPPER_SKILLS_DIR: skillsDir,
    DIPPER_PORT: String(gatewayPort),
    DIPPER_OPERATOR_TOKEN: operatorToken,
    DIPPER_TOKEN_SECRET: tokenSecret,
    DIPPER_WORKFLOW_BUNDLE: bundlePath,
    DIPPER_TERMINATE_GRACE_SECONDS: '5',
    // A waiting ask_user tells its client it is alive every second, so tests can use short client timeouts.
    DIPPER_QUESTION_PROGRESS_MS: '1000',
    DIPPER_LOG_LEVEL: 'warn',
    // Not the server's default (10 s), so test/durability/taskTimeout.test.ts sees whether every workflow got Dipper's.
    DIPPER_WORKFLOW_TASK_TIMEOUT_MS: '11000',
    // Every tool result of every test call is checked against its published output schema.
    DIPPER_CHECK_OUTPUTS: '1',
    // The embedded Task service of the agentteam tools, started below; other test stacks reuse it.
    DIPPER_TASK_SERVICE_PORT: String(gatewayPort + 2),
    DIPPER_TASK_ADMIN_KEY: `dtk_test_${crypto.randomBytes(12).toString('hex')}`,
    // The isphere tools read the bridge simulator started below, and a local store exported from the same seed.
    DIPPER_ISPHERE_BRIDGE_URL: `http://127.0.0.1:${gatewayPort + 3}`,
    DIPPER_ISPHERE_BRIDGE_TOKEN: `dbt_test_${crypto.randomBytes(12).toString('hex')}`,
    DIPPER_ISPHERE_LOCAL_STORE: path.join(dataDir, 'isphere-export.db'),
    DIPPER_ISPHERE_POLICY_FILE: path.join(projectRoot, 'test', 'fixtures', 'isphere', 'policy.json'),
    // The audit chain's witness, outside the data folder as it must be (a stack with a data folder of its own gets its own).
    DIPPER_AUDIT_WITNESS: path.join(testDataRoot, 'audit-witness.json'),
    // A queue of its own: the cluster's workers serve `dipper`.
    ...(cluster ? { DIPPER_DATABASE_URL: cluster.databaseUrl, DIPPER_TASK_QUEUE: 'dipper-tests', ...cluster.temporalTls } : {}),
  };
  try {
    exportSeed(defaultSeed(), processEnv.DIPPER_ISPHERE_LOCAL_STORE);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const taskService = startProcess(
    'taskservice',
    { ...processEnv, DIPPER_TASK_SERVICE_DB: path.join(dataDir, 'tasks.db'), DIPPER_TASK_SERVICE_HOST: '127.0.0.1' },
    path.join(testDataRoot, 'taskservice.log'),
  );
  const simControlToken = `dsc_test_${crypto.randomBytes(12).toString('hex')}`;
  const bridgeSim = startProcess(
    'isphere/bridgeSim',
    { DIPPER_ISPHERE_BRIDGE_TOKEN: processEnv.DIPPER_ISPHERE_BRIDGE_TOKEN, DIPPER_ISPHERE_SIM_CONTROL_TOKEN: simControlToken, DIPPER_ISPHERE_SIM_PORT: String(gatewayPort + 3) },
    path.join(testDataRoot, 'isphere-sim.log'),
  );
  // The shared worker alone serves its metrics page: every other stack's worker would want the same port.
  const workerMetricsUrl = `http://127.0.0.1:${gatewayPort + 4}`;
  const worker = startProcess('worker', { ...processEnv, DIPPER_WORKER_METRICS_PORT: String(gatewayPort + 4) }, path.join(testDataRoot, 'worker.log'));
  const gateway = startProcess('gateway', processEnv, path.join(testDataRoot, 'gateway.log'));
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const stopAll = async () => {
    await Promise.all([gateway.kill(), worker.kill(), taskService.kill(), bridgeSim.kill()] satisfies Promise<void>[]);
    await server.stop();
  };
  try {
    await waitForHttp(`${gatewayUrl}/healthz`);
    await waitForHttp(`http://127.0.0.1:${gatewayPort + 2}/healthz`);
    await waitForHttp(`${processEnv.DIPPER_ISPHERE_BRIDGE_URL}/healthz`);
  } catch (err) {
    // A stack that never came up is taken down, so it does not hold the ports of the next run (its logs stay).
    await stopAll();
    throw err;
  }

  writeTestEnv(testDataRoot, {
    gatewayUrl,
    workerMetricsUrl,
    operatorToken,
    tokenSecret,
    temporalAddress: server.address,
    namespace: 'dipper',
    dataDir,
    skillsDir,
    bundlePath,
    processEnv,
    pids: { worker: worker.proc.pid!, gateway: gateway.proc.pid!, temporal: server.pid, taskService: taskService.proc.pid!, bridgeSim: bridgeSim.proc.pid! },
    isphere: { bridgeUrl: processEnv.DIPPER_ISPHERE_BRIDGE_URL, controlToken: simControlToken, localStore: processEnv.DIPPER_ISPHERE_LOCAL_STORE },
  });
  (globalThis as { __dipperStack?: Started }).__dipperStack = {
    stop: stopAll,
    replayAlong: startReplayAlong(testDataRoot),
  };
}
