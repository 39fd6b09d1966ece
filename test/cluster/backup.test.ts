import fs from 'node:fs';
import path from 'node:path';
import { backupCluster, restoreCluster } from '../../src/cluster/backup';
import { loadBackupKey, type BackupKey } from '../../src/ops/backupKey';
import { startCluster, type ClusterRecord } from '../../src/cluster/cluster';
import { postgresFromEnv } from '../../src/cli/cluster';
import { AgentClient, Operator } from '../support/clients';
import { projectRoot } from '../support/processes';
import { testDataRoot } from '../setup/env';

/**
 * Run by `dipper cluster test` only: a cluster of its own backed up while
 * it runs, its folder and databases lost, restored and started again. The
 * run goes on from the backup with the tokens it had.
 */
const recordFile = process.env.DIPPER_TEST_CLUSTER;
const maybe = recordFile ? describe : describe.skip;

maybe('a cluster backed up and restored', () => {
  // Under the run's test data, kept with its logs for whoever reads a failure.
  const root = path.join(testDataRoot, 'cluster-backup');
  const dir = path.join(root, 'cluster');
  const databases = { main: 'dipper_backup_temporal', visibility: 'dipper_backup_visibility', dipper: 'dipper_backup' };
  const base = recordFile ? Number(new URL(`http://${(JSON.parse(fs.readFileSync(recordFile, 'utf8')) as ClusterRecord).temporalAddress}`).port) + 200 : 0;
  const up = (fresh: boolean) =>
    startCluster({ projectRoot, dir, pg: postgresFromEnv(), fresh, basePort: base, databases, extraEnv: { DIPPER_LOG_LEVEL: 'warn' }, env: {}, log: () => undefined });
  let key: BackupKey;
  beforeAll(() => {
    fs.rmSync(root, { recursive: true, force: true });
    // The test's own key, beside (not inside) the backup: never the operator's ~/.config one.
    key = loadBackupKey(path.join(root, 'backup.key'), { create: true, notIn: [dir, path.join(root, 'backup')] });
  });

  it('goes on from the backup: its run, plan and tokens', async () => {
    let cluster = await up(true);
    let client: AgentClient | undefined;
    try {
      const operatorToken = cluster.record.operatorToken;
      const operator = new Operator({ gatewayUrl: cluster.record.url, operatorToken });
      const started = (await operator.request('POST', '/runs', { task: 'Outlive the databases.' })).json;
      const token: string = started.root.agent_token;
      client = await AgentClient.connect(cluster.record.url, token);
      await client.ok('declare_plan', { tasks: [{ id: 'a', role: 'writer', skill: 'lead', task: 'Write.' }] });

      const manifest = await backupCluster({ dir, pg: postgresFromEnv(), databases, to: path.join(root, 'backup'), key });
      expect(manifest.dumps).toHaveLength(3);
      expect(manifest.kept).toEqual(expect.arrayContaining(['secrets.json', path.join('tasks', 'tasks.db')]));
      // The run's host folder (a host that holds no run has none yet); never the certificates and their CA key.
      expect(manifest.kept.filter((f) => f.startsWith('host-')).length).toBeGreaterThanOrEqual(1);
      expect(manifest.files.filter((f) => f.path.includes('certs') || f.path.endsWith('.key'))).toEqual([]);

      await client.close();
      client = undefined;
      await cluster.stop();
      fs.renameSync(dir, `${dir}-lost`);
      restoreCluster({ from: path.join(root, 'backup'), dir, pg: postgresFromEnv(), key });
      cluster = await up(false);
      expect(cluster.record.operatorToken).toBe(operatorToken);
      expect((await new Operator({ gatewayUrl: cluster.record.url, operatorToken }).request('GET', `/runs/${started.run_id}`)).json.status).toBe('active');
      client = await AgentClient.connect(cluster.record.url, token);
      expect((await client.ok('list_ready', {})).ready).toEqual(['a']);
      expect((await client.ok('spawn_agent', { task_id: 'a' })).agent_id).toMatch(/^ag_/);
    } finally {
      await client?.close().catch(() => undefined);
      await cluster.stop();
    }
  }, 300_000);
});
