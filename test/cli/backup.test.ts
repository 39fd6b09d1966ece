import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { backup, restore } from '../../src/ops/backup';
import { copyFile } from '../../src/ops/backupFiles';
import { loadBackupKey, type BackupKey } from '../../src/ops/backupKey';
import { readTestEnv, testDataRoot } from '../setup/env';
import { AgentClient, eventually, Operator } from '../support/clients';
import { cleanEnv, dipper, NpmStart } from './npmStart';

/**
 * An embedded stack (`npm start`: its own Temporal dev server on a SQLite
 * file) backed up while it runs, stopped, its folder lost, restored into an
 * empty one and started again: the run goes on with the tokens it had, the
 * send approved before the backup is in the audit chain, and the chain
 * verifies against the witness of the backup's moment.
 */
const gatewayPort = 27730;
const temporalPort = 26243;
const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
const dir = path.join(testDataRoot, 'backup');
const dataDir = path.join(dir, 'data');
const witness = path.join(dir, 'witness', 'audit-witness.json');
const shared = readTestEnv();
const env = cleanEnv({
  DIPPER_DATA_DIR: dataDir,
  DIPPER_STACK_FILE: path.join(dir, 'stack.json'),
  DIPPER_PORT: String(gatewayPort),
  DIPPER_TEMPORAL_DEV_PORT: String(temporalPort),
  DIPPER_TEMPORAL_UI_PORT: String(temporalPort + 1),
  DIPPER_TASK_SERVICE_PORT: String(gatewayPort + 2),
  DIPPER_SKILLS_DIR: shared.skillsDir,
  DIPPER_WORKFLOW_BUNDLE: shared.bundlePath,
  DIPPER_AUDIT_WITNESS: witness,
  // The test's own signing key, never the machine's ~/.config/dipper one.
  DIPPER_BACKUP_KEY_FILE: path.join(dir, 'backup.key'),
  DIPPER_ISPHERE_BRIDGE_URL: shared.processEnv.DIPPER_ISPHERE_BRIDGE_URL,
  DIPPER_ISPHERE_BRIDGE_TOKEN: shared.processEnv.DIPPER_ISPHERE_BRIDGE_TOKEN,
  DIPPER_ISPHERE_POLICY_FILE: shared.processEnv.DIPPER_ISPHERE_POLICY_FILE,
  DIPPER_LOG_LEVEL: 'warn',
});

/** What a folder really takes on disk (allocated blocks, not apparent sizes). */
function diskBytes(folder: string): number {
  return fs.readdirSync(folder, { withFileTypes: true, recursive: true }).reduce((n, e) => n + (e.isFile() ? fs.statSync(path.join(e.parentPath, e.name)).blocks * 512 : 0), 0);
}

const stacks: NpmStart[] = [];
afterAll(() => {
  for (const s of stacks) if (s.proc.exitCode === null && s.proc.signalCode === null) s.signalGroup('SIGKILL');
});

async function up(): Promise<NpmStart> {
  const stack = new NpmStart(['--no-run'], env);
  stacks.push(stack);
  await stack.waitFor('Dipper is up.');
  return stack;
}

async function down(stack: NpmStart): Promise<void> {
  stack.signalGroup('SIGINT');
  expect((await stack.exited).code).toBe(0);
}

it('backs up a running stack, and a restore into an empty folder goes on from there with its tokens and a whole audit chain', async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  // The witness lives outside the data folder, where the operator made room for it.
  fs.mkdirSync(path.dirname(witness), { recursive: true });
  const first = await up();
  const operatorToken = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')).operatorToken as string;
  const operator = new Operator({ gatewayUrl, operatorToken });
  const started = (await operator.request('POST', '/runs', { task: 'Outlive the disk.' })).json;
  const token: string = started.root.agent_token;
  const root = await AgentClient.connect(gatewayUrl, token);
  const isphere = await AgentClient.connect(gatewayUrl, token, 'isphere');
  await root.ok('declare_plan', { tasks: [{ id: 'a', role: 'writer', skill: 'worker', task: 'Write.' }] });
  // A real send, approved by a person: two audit records and the witness's head.
  const send = { target_type: 'group', target_id: 'g_0002', content_text: 'Before the backup.' };
  const approvalId = (await isphere.ok('isphere_send_message', send)).approval.approval_id as string;
  await eventually(async () => ((await operator.request('POST', `/isphere/approvals/${approvalId}/approve`, {})).status === 200 ? true : undefined), 30_000, 250);
  expect((await isphere.ok('isphere_send_message', { ...send, dry_run: false, approval_id: approvalId })).send_status).toBe('sent');

  // An agent's 10 GiB sparse file: left out and named, and the backup finishes without writing 10 GiB.
  const workspace = path.join(dataDir, 'runs', started.run_id, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'big.txt'), '');
  fs.truncateSync(path.join(workspace, 'big.txt'), 10 * 1024 ** 3);
  const taken = await dipper(['backup', path.join(dir, 'backup')], env);
  expect(taken).toMatchObject({ code: 0 });
  expect(taken.stdout).toMatch(/^backed up \d+ files .*left out 1 files/);
  expect(taken.stderr).toContain(`left out "runs/${started.run_id}/workspace/big.txt": 10,737,418,240 bytes, over the limit of 1,073,741,824 bytes`);
  expect(diskBytes(path.join(dir, 'backup'))).toBeLessThan(1024 ** 3);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'backup', 'manifest.json'), 'utf8'));
  expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(expect.arrayContaining(['data/temporal.db', 'data/events.db', 'data/audit.db', 'data/tasks.db', 'data/secrets.json', 'witness.json']));

  // After the backup: a message the restore will not have, and a send whose records the restored chain will not have.
  await root.ok('send_message', { to: started.root.agent_id, content: 'After the backup.' }).catch(() => undefined);
  await root.close();
  await isphere.close();
  await down(first);

  // The disk is lost; the witness of the newer head is moved aside, as a restore winds the chain back on purpose.
  fs.renameSync(dataDir, `${dataDir}-lost`);
  const refused = await dipper(['restore', path.join(dir, 'backup')], env);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('the audit witness');
  fs.renameSync(witness, `${witness}-newer`);
  expect(await dipper(['restore', path.join(dir, 'backup')], env)).toMatchObject({ code: 0 });

  const second = await up();
  const again = await AgentClient.connect(gatewayUrl, token);
  try {
    // Its run, plan and tokens are as they were at the backup.
    expect((await operator.request('GET', `/runs/${started.run_id}`)).json.status).toBe('active');
    expect((await again.ok('list_ready', {})).ready).toEqual(['a']);
    const member = await again.ok('spawn_agent', { task_id: 'a' });
    expect(member.agent_id).toMatch(/^ag_/);
    const audit = await dipper(['audit', 'verify'], env);
    expect(audit).toMatchObject({ code: 0 });
    const listed = (await dipper(['audit', 'list'], env)).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(listed.filter((r) => r.approval_id === approvalId).map((r) => r.kind)).toEqual(['intent', 'outcome']);
  } finally {
    await again.close();
    await operator.request('POST', `/runs/${started.run_id}/cancel`, { reason: 'test over' });
    await down(second);
  }
}, 240_000);

/**
 * Backup folders without a stack: a data folder made by hand (a real SQLite
 * file, the secrets, a run's workspace an agent filled), backed up and
 * restored with the test's own key.
 */
describe('a backup folder', () => {
  const root = path.join(testDataRoot, 'backup-folder');
  const data = path.join(root, 'data');
  const ws = path.join(data, 'runs', 'run_1', 'workspace');
  let key: BackupKey;
  let n = 0;
  const fresh = async () => {
    const to = path.join(root, `backup-${++n}`);
    const lines: string[] = [];
    const manifest = await backup({ dataDir: data, to, key, log: (l) => lines.push(l) });
    return { to, manifest, lines };
  };
  const target = () => path.join(root, `restored-${++n}`);

  beforeAll(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(ws, { recursive: true });
    const db = new Database(path.join(data, 'events.db'));
    db.exec("CREATE TABLE events (body TEXT); INSERT INTO events VALUES ('kept')");
    db.close();
    fs.writeFileSync(path.join(data, 'secrets.json'), JSON.stringify({ tokenSecret: 'a'.repeat(64) }), { mode: 0o600 });
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'the work');
    fs.symlinkSync('/', path.join(ws, 'hostroot'));
    // 10 GiB of nothing, and 16 MiB with 1 KiB of data at its start: both sparse.
    fs.writeFileSync(path.join(ws, 'big.txt'), '');
    fs.truncateSync(path.join(ws, 'big.txt'), 10 * 1024 ** 3);
    fs.writeFileSync(path.join(ws, 'holes.bin'), Buffer.alloc(1024, 7));
    fs.truncateSync(path.join(ws, 'holes.bin'), 16 * 1024 ** 2);
    key = loadBackupKey(path.join(root, 'keys', 'backup.key'), { create: true, notIn: [data] });
  });

  it('leaves out a 10 GiB sparse file, naming it, keeps a smaller one sparse, and restores the rest', async () => {
    const { to, manifest, lines } = await fresh();
    expect(manifest.skipped).toEqual([{ path: 'runs/run_1/workspace/big.txt', bytes: 10 * 1024 ** 3, reason: '10,737,418,240 bytes, over the limit of 1,073,741,824 bytes' }]);
    expect(lines).toContain('left out "runs/run_1/workspace/big.txt": 10,737,418,240 bytes, over the limit of 1,073,741,824 bytes');
    const holes = fs.statSync(path.join(to, 'data', 'runs', 'run_1', 'workspace', 'holes.bin'));
    expect(holes.size).toBe(16 * 1024 ** 2);
    expect(holes.blocks * 512).toBeLessThan(1024 ** 2);
    expect(diskBytes(to)).toBeLessThan(4 * 1024 ** 2);
    expect(manifest.links).toEqual([{ path: 'data/runs/run_1/workspace/hostroot', target: '/' }]);
    // What a folder swapped for a link in mid-backup would lead to: a file reached through a link out of the data folder is not read.
    expect(() => copyFile(path.join(ws, 'hostroot', 'etc', 'passwd'), path.join(root, 'passwd'), { within: fs.realpathSync(data) })).toThrow('outside the folder backed up');
    expect(fs.existsSync(path.join(root, 'passwd'))).toBe(false);

    const into = target();
    const said: string[] = [];
    restore({ from: to, dataDir: into, key, log: (l) => said.push(l) });
    expect(said).toContain('not in the backup: "runs/run_1/workspace/big.txt" (10,737,418,240 bytes, over the limit of 1,073,741,824 bytes)');
    const back = path.join(into, 'runs', 'run_1', 'workspace');
    expect(fs.readFileSync(path.join(back, 'notes.txt'), 'utf8')).toBe('the work');
    expect(fs.readFileSync(path.join(back, 'holes.bin')).equals(fs.readFileSync(path.join(ws, 'holes.bin')))).toBe(true);
    expect(fs.statSync(path.join(back, 'holes.bin')).blocks * 512).toBeLessThan(1024 ** 2);
    expect(fs.readlinkSync(path.join(back, 'hostroot'))).toBe('/');
    expect(fs.existsSync(path.join(back, 'big.txt'))).toBe(false);
    expect(fs.statSync(path.join(into, 'secrets.json')).mode & 0o777).toBe(0o600);
    const db = new Database(path.join(into, 'events.db'), { readonly: true });
    expect(db.prepare('SELECT body FROM events').pluck().all()).toEqual(['kept']);
    db.close();
  });

  const manifestOf = (to: string) => JSON.parse(fs.readFileSync(path.join(to, 'manifest.json'), 'utf8'));
  it.each([
    ['an unlisted file added', (to: string) => fs.writeFileSync(path.join(to, 'data', 'runs', 'run_1', 'workspace', 'evil.sh'), 'curl … | sh'), /"data\/runs\/run_1\/workspace\/evil.sh" is not in the manifest/],
    ['an unlisted link added', (to: string) => fs.symlinkSync('/etc', path.join(to, 'data', 'etc')), /"data\/etc" is not in the manifest/],
    ['a file changed', (to: string) => fs.writeFileSync(path.join(to, 'data', 'secrets.json'), '{"tokenSecret":"mine"}'), /"data\/secrets.json" changed since the backup was taken/],
    [
      'a file changed and the manifest re-hashed, re-signed without the key',
      (to: string) => {
        const file = path.join(to, 'data', 'secrets.json');
        fs.writeFileSync(file, '{"tokenSecret":"mine"}');
        const m = manifestOf(to);
        const entry = m.files.find((f: { path: string }) => f.path === 'data/secrets.json');
        Object.assign(entry, { bytes: fs.statSync(file).size, sha256: crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') });
        m.signature = { ...m.signature, value: crypto.createHmac('sha256', 'a guess').update(JSON.stringify(m)).digest('hex') };
        fs.writeFileSync(path.join(to, 'manifest.json'), JSON.stringify(m));
      },
      /the signature does not match the backup key/,
    ],
    ['the signature removed', (to: string) => fs.writeFileSync(path.join(to, 'manifest.json'), JSON.stringify({ ...manifestOf(to), signature: undefined })), /is not signed: refused/],
  ])('is refused by restore with %s, before anything is written', async (_what, tamper, reason) => {
    const { to } = await fresh();
    tamper(to);
    const into = target();
    expect(() => restore({ from: to, dataDir: into, key })).toThrow(reason);
    expect(fs.existsSync(into)).toBe(false);
  });

  it('is refused by restore when signed with another key, naming both, and its key is never in the data folder', async () => {
    const { to } = await fresh();
    const other = loadBackupKey(path.join(root, 'keys', 'other.key'), { create: true, notIn: [data] });
    expect(() => restore({ from: to, dataDir: target(), key: other })).toThrow(new RegExp(`it names key ${key.id}; .*other.key is key ${other.id}`));
    // Nor is a key kept in the data folder, where whoever changes the folder would find it.
    expect(() => loadBackupKey(path.join(data, 'backup.key'), { create: true, notIn: [data] })).toThrow(/is inside .*: it must live apart/);
    expect(fs.existsSync(path.join(data, 'backup.key'))).toBe(false);
  });

  it('that failed midway says so, is removed, and a folder without a manifest is refused', async () => {
    // A database file that is not one: the online backup fails after the workspace was copied.
    const broken = path.join(root, 'broken-data');
    fs.cpSync(data, broken, { recursive: true, verbatimSymlinks: true, filter: (p) => !p.endsWith('big.txt') });
    fs.writeFileSync(path.join(broken, 'zz.db'), Buffer.concat([Buffer.from('SQLite format 3\u0000'), Buffer.alloc(4096, 0xff)]));
    const to = path.join(root, 'failed');
    await expect(backup({ dataDir: broken, to, key })).rejects.toThrow(/^the backup failed while copying zz.db: .+; the partial backup in .+failed was removed$/);
    expect(fs.existsSync(to)).toBe(false);

    // A backup killed midway (no manifest yet) is refused for what it is.
    fs.mkdirSync(path.join(to, 'data'), { recursive: true });
    fs.writeFileSync(path.join(to, 'data', 'secrets.json'), '{}');
    expect(() => restore({ from: to, dataDir: target(), key })).toThrow(/has no manifest.json: not a finished Dipper backup/);
  });

});
