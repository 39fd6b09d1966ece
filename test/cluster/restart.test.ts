import fs from 'node:fs';
import path from 'node:path';
import { startCluster, type ClusterRecord } from '../../src/cluster/cluster';
import { postgresFromEnv } from '../../src/cli/cluster';
import { AgentClient, eventually, Operator } from '../support/clients';
import { projectRoot } from '../support/processes';
import { testDataRoot } from '../setup/env';

/**
 * Run by `dipper cluster test` only (it has the Go-built server and
 * PostgreSQL): a `cluster up` of its own, on its own folder, databases and
 * ports. A worker killed is started again by the cluster and said so; the
 * whole cluster stopped and started again keeps every token valid.
 */
const recordFile = process.env.DIPPER_TEST_CLUSTER;
const maybe = recordFile ? describe : describe.skip;

maybe('cluster up, restarted', () => {
  // Under the run's test data, kept with its logs for whoever reads a failure.
  const dir = path.join(testDataRoot, 'cluster-restart');
  const lines: string[] = [];
  const base = recordFile ? Number(new URL(`http://${(JSON.parse(fs.readFileSync(recordFile, 'utf8')) as ClusterRecord).temporalAddress}`).port) + 100 : 0;
  const up = (fresh: boolean) =>
    startCluster({
      projectRoot,
      dir,
      pg: postgresFromEnv(),
      fresh,
      basePort: base,
      databases: { main: 'dipper_restart_temporal', visibility: 'dipper_restart_visibility', dipper: 'dipper_restart' },
      extraEnv: { DIPPER_LOG_LEVEL: 'warn' },
      supervise: true,
      env: {},
      log: (line) => lines.push(line),
    });
  beforeAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('starts a killed worker again, and keeps operator and agent tokens valid across a restart', async () => {
    let cluster = await up(true);
    let client: AgentClient | undefined;
    try {
      const operatorToken = cluster.record.operatorToken;
      const operator = new Operator({ gatewayUrl: cluster.record.url, operatorToken });
      const started = await operator.request('POST', '/runs', { task: 'Outlive a restart.' });
      expect(started.status).toBe(201);
      const token: string = started.json.root.agent_token;
      client = await AgentClient.connect(cluster.record.url, token);
      await client.ok('list_peers', {});

      const worker = cluster.record.processes.find((p) => p.name === 'worker-host-a')!;
      const killed = worker.pid;
      process.kill(killed, 'SIGKILL');
      const record = () => JSON.parse(fs.readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as ClusterRecord;
      const again = await eventually(async () => {
        const pid = record().processes.find((p) => p.name === 'worker-host-a')!.pid;
        return pid !== killed ? pid : undefined;
      }, 60_000, 250);
      expect(again).not.toBe(killed);
      expect(lines).toContain(`worker-host-a started again (pid ${again})`);
      await eventually(async () => ((await fetch(`${worker.metricsUrl}/healthz`).catch(() => null))?.status === 200 ? true : undefined), 60_000, 250);

      await client.close();
      client = undefined;
      await cluster.stop();
      cluster = await up(false);
      expect(cluster.record.operatorToken).toBe(operatorToken);
      expect((await new Operator({ gatewayUrl: cluster.record.url, operatorToken }).request('GET', `/runs/${started.json.run_id}`)).status).toBe(200);
      client = await AgentClient.connect(cluster.record.url, token);
      expect((await client.ok('list_peers', { scope: 'all' })).peers.map((p: { agent_id: string }) => p.agent_id)).toEqual([started.json.root.agent_id]);
    } finally {
      await client?.close().catch(() => undefined);
      await cluster.stop();
    }
  }, 300_000);
});
