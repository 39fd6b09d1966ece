import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { backupCluster, checkClusterBackup, copyClusterFiles, restoreCluster, sealClusterBackup } from '../../src/cluster/backup';
import { ensureCerts } from '../../src/cluster/certs';
import { loadBackupKey } from '../../src/ops/backupKey';

/**
 * A cluster's backup folder without a cluster: its folder made by hand (the
 * secrets, real certificates, a host's workspace an agent filled, the Task
 * service's SQLite file). The manifest is signed and checked; the CA key and
 * the other TLS keys stay out. With PostgreSQL (DIPPER_TEST_DATABASE_URL), a
 * real backup of three throwaway databases whose tampered copy restore refuses
 * before it drops anything.
 */
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-cluster-backup-'));
const dir = path.join(root, 'cluster');
const key = loadBackupKey(path.join(root, 'keys', 'backup.key'), { create: true, notIn: [dir] });
const ws = path.join(dir, 'host-a', 'runs', 'run_1', 'workspace');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

beforeAll(() => {
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(dir, 'secrets.json'), '{"operatorToken":"dpo_cluster_x"}', { mode: 0o600 });
  ensureCerts(path.join(dir, 'certs'));
  fs.writeFileSync(path.join(ws, 'notes.txt'), 'the work');
  fs.writeFileSync(path.join(ws, 'big.txt'), '');
  fs.truncateSync(path.join(ws, 'big.txt'), 10 * 1024 ** 3);
  fs.mkdirSync(path.join(dir, 'tasks'));
  const db = new Database(path.join(dir, 'tasks', 'tasks.db'));
  db.exec('CREATE TABLE tasks (id TEXT)');
  db.close();
});

let n = 0;
/** The folder part of a backup; the dumps are stand-in files (the PostgreSQL case below makes real ones). */
async function folderBackup() {
  const to = path.join(root, `backup-${++n}`);
  const lines: string[] = [];
  const { kept, skipped } = await copyClusterFiles(dir, to, { maxFileBytes: 1024 ** 3, log: (l) => lines.push(l) });
  const databases = { main: 'c_main', visibility: 'c_visibility', dipper: 'c_dipper' };
  for (const db of Object.values(databases)) fs.writeFileSync(path.join(to, `${db}.dump`), `dump of ${db}`);
  const manifest = sealClusterBackup(to, { databases, dumps: Object.values(databases).map((d) => `${d}.dump`), kept, skipped }, key);
  return { to, manifest, lines };
}

describe("a cluster's backup folder", () => {
  it('holds no certificate or key of its CA, leaves a 10 GiB sparse host file out, and is signed', async () => {
    expect(fs.existsSync(path.join(dir, 'certs', 'ca.key'))).toBe(true);
    const { to, manifest, lines } = await folderBackup();
    expect(manifest.kept).toEqual(['host-a', 'secrets.json', path.join('tasks', 'tasks.db')]);
    const all = [...manifest.files, ...manifest.dirs, ...manifest.links].map((e) => e.path);
    expect(all.filter((p) => p.includes('certs') || p.endsWith('.key') || p.endsWith('.pem'))).toEqual([]);
    expect(all).toContain('files/host-a/runs/run_1/workspace/notes.txt');
    expect(lines).toEqual(['left out "host-a/runs/run_1/workspace/big.txt": 10,737,418,240 bytes, over the limit of 1,073,741,824 bytes']);
    expect(manifest.signature).toMatchObject({ alg: 'hmac-sha256', key_id: key.id });
    expect(checkClusterBackup(to, key)).toEqual(manifest);
  });

  it.each([
    ['an unlisted file', (to: string) => fs.writeFileSync(path.join(to, 'files', 'host-a', 'extra'), 'x'), /"files\/host-a\/extra" is not in the manifest/],
    ['a changed dump', (to: string) => fs.appendFileSync(path.join(to, 'c_dipper.dump'), ' and more'), /"c_dipper.dump" changed since the backup was taken/],
    ['a CA key slipped in', (to: string) => fs.writeFileSync(path.join(to, 'files', 'ca.key'), 'key'), /"files\/ca.key" is not in the manifest/],
    [
      'a manifest edited without the key',
      (to: string) => {
        const m = JSON.parse(fs.readFileSync(path.join(to, 'manifest.json'), 'utf8'));
        m.databases.dipper = 'someone_elses';
        fs.writeFileSync(path.join(to, 'manifest.json'), JSON.stringify(m));
      },
      /the signature does not match the backup key/,
    ],
  ])('is refused with %s', async (_what, tamper, reason) => {
    const { to } = await folderBackup();
    tamper(to);
    expect(() => checkClusterBackup(to, key)).toThrow(reason);
  });
});

const pgUrl = process.env.DIPPER_TEST_DATABASE_URL;
(pgUrl ? describe : describe.skip)('a cluster backup with its databases', () => {
  const suffix = randomBytes(4).toString('hex');
  const databases = { main: `dipper_cb_main_${suffix}`, visibility: `dipper_cb_vis_${suffix}`, dipper: `dipper_cb_${suffix}` };
  const url = new URL(pgUrl ?? 'postgres://x@127.0.0.1/x');
  const pg = { host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  const sql = async (db: string, text: string) => {
    const client = new Client({ ...pg, database: db });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  const admin = url.pathname.slice(1);
  beforeAll(async () => {
    for (const db of Object.values(databases)) {
      await sql(admin, `CREATE DATABASE ${db}`);
      await sql(db, "CREATE TABLE marker (v TEXT); INSERT INTO marker VALUES ('before')");
    }
  });
  afterAll(async () => {
    for (const db of Object.values(databases)) await sql(admin, `DROP DATABASE IF EXISTS ${db}`);
  });

  it('is refused before any database is dropped or any file written', async () => {
    const to = path.join(root, 'with-databases');
    await backupCluster({ dir, pg, databases, to, key, log: () => undefined });
    for (const db of Object.values(databases)) await sql(db, "UPDATE marker SET v = 'after'");
    const extra = path.join(to, 'files', 'host-a', 'runs', 'run_1', 'workspace', 'evil.sh');
    fs.writeFileSync(extra, 'x');
    const into = path.join(root, 'restored');
    expect(() => restoreCluster({ from: to, dir: into, pg, key })).toThrow(/evil.sh" is not in the manifest/);
    expect(await sql(databases.dipper, 'SELECT v FROM marker')).toEqual([{ v: 'after' }]);
    expect(fs.existsSync(into)).toBe(false);

    // Restored whole, the cluster's first start makes its certificates again, by a new CA (cluster test: test/cluster/backup.test.ts).
    fs.rmSync(extra);
    expect(checkClusterBackup(to, key).kept).toContain('host-a');
  }, 60_000);
});
