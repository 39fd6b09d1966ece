import fs from 'node:fs';
import path from 'node:path';
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
  DIPPER_ISPHERE_BRIDGE_URL: shared.processEnv.DIPPER_ISPHERE_BRIDGE_URL,
  DIPPER_ISPHERE_BRIDGE_TOKEN: shared.processEnv.DIPPER_ISPHERE_BRIDGE_TOKEN,
  DIPPER_ISPHERE_POLICY_FILE: shared.processEnv.DIPPER_ISPHERE_POLICY_FILE,
  DIPPER_LOG_LEVEL: 'warn',
});

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

  const taken = await dipper(['backup', path.join(dir, 'backup')], env);
  expect(taken).toMatchObject({ code: 0 });
  expect(taken.stdout).toMatch(/^backed up \d+ files/);
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
