import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { ANCHOR_EVENT, openAuditStore } from '../../src/common/stores/audit';
import { SqliteEventStore } from '../../src/common/stores/eventStore';
import { auditKey } from '../../src/auth/secrets';
import { loadConfig } from '../../src/config';
import { paths } from '../../src/paths';
import { auditEntry } from '../fixtures/isphere/auditEntries';
import { projectRoot } from '../support/processes';
import { cleanEnv } from './npmStart';

/** `dipper audit verify` as an operator runs it: on a data folder with records and their anchors, before and after tampering. */
const run = promisify(execFile);
const settings = (dataDir: string) => ({ DIPPER_DATA_DIR: dataDir, DIPPER_TOKEN_SECRET: 'cli-audit-secret', DIPPER_OPERATOR_TOKEN: 'dpo_cli_audit', DIPPER_STACK_FILE: path.join(dataDir, 'none.json') });

async function dipper(dataDir: string, args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: projectRoot, env: cleanEnv(settings(dataDir)) });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

/** Four records with their anchors in the event log, written with the key the CLI derives. */
async function folderWithRecords(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-audit-cli-'));
  const config = loadConfig(settings(dataDir));
  const store = await openAuditStore(config, auditKey(config, { tokenSecret: 'cli-audit-secret', operatorToken: 'dpo_cli_audit' }));
  const events = new SqliteEventStore(paths.events(dataDir));
  for (const id of ['apr_a', 'apr_b']) {
    for (const kind of ['intent', 'outcome'] as const) {
      const row = await store.append(auditEntry(id, kind));
      await events.append([{ event_id: `anchor-${row.seq}`, run_id: 'run_000000000001', agent_id: null, type: ANCHOR_EVENT, ts: Date.now(), data: { seq: row.seq, hash: row.hash } }]);
    }
  }
  await store.close();
  await events.close();
  return dataDir;
}

function tamper(dataDir: string, sql: string): void {
  const db = new Database(paths.audit(dataDir));
  db.exec('DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;');
  db.exec(sql);
  db.close();
}

it('says the chain is whole, then names an edit, a removal, a swap and a cut tail, exiting 1', async () => {
  const dataDir = await folderWithRecords();
  const whole = await dipper(dataDir, ['audit', 'verify']);
  expect(whole).toEqual({ code: 0, stdout: 'audit chain ok: 4 records, 4 anchors\n' });
  const listed = (await dipper(dataDir, ['audit', 'list'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
  expect(listed.map((r) => [r.seq, r.record_id])).toEqual([
    [1, 'apr_a/intent'],
    [2, 'apr_a/outcome'],
    [3, 'apr_b/intent'],
    [4, 'apr_b/outcome'],
  ]);

  tamper(dataDir, `UPDATE audit SET body = replace(body, '"sent"', '"failed"') WHERE seq = 2`);
  expect(await dipper(dataDir, ['audit', 'verify'])).toEqual({ code: 1, stdout: 'edited at 2: the record does not match its hash\n' });

  const removed = await folderWithRecords();
  tamper(removed, 'DELETE FROM audit WHERE seq = 3');
  expect((await dipper(removed, ['audit', 'verify'])).stdout).toBe('removed at 3: a record is missing there\n');

  const swapped = await folderWithRecords();
  tamper(swapped, 'UPDATE audit SET seq = -seq WHERE seq IN (1, 2); UPDATE audit SET seq = 2 WHERE seq = -1; UPDATE audit SET seq = 1 WHERE seq = -2');
  const reordered = await dipper(swapped, ['audit', 'verify', '--json']);
  expect(reordered.code).toBe(1);
  expect(JSON.parse(reordered.stdout)).toMatchObject({ ok: false, records: 4, problems: expect.arrayContaining([expect.objectContaining({ kind: 'reordered', seq: 1 })]) });

  const cut = await folderWithRecords();
  tamper(cut, 'DELETE FROM audit WHERE seq = 4');
  expect(await dipper(cut, ['audit', 'verify'])).toEqual({ code: 1, stdout: 'tail truncated: record 4 was appended (the event log has its anchor) and is no longer there\n' });
});
