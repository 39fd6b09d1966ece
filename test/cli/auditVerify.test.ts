import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { ANCHOR_EVENT, openAuditStore } from '../../src/common/stores/audit';
import { chainHash } from '../../src/common/stores/audit/chain';
import { SqliteEventStore } from '../../src/common/stores/eventStore';
import { auditKey } from '../../src/auth/secrets';
import { loadConfig } from '../../src/config';
import { paths } from '../../src/paths';
import { auditEntry } from '../fixtures/isphere/auditEntries';
import { projectRoot } from '../support/processes';
import { cleanEnv } from './npmStart';

/** `dipper audit verify` as an operator runs it: on a data folder with records and their anchors, before and after tampering. */
const run = promisify(execFile);
/** A witness beside each data folder, never inside it (as on another volume). */
const witnessOf = (dataDir: string) => `${dataDir}-witness.json`;
const settings = (dataDir: string, witness = false): Record<string, string> => ({
  DIPPER_DATA_DIR: dataDir,
  DIPPER_TOKEN_SECRET: 'cli-audit-secret',
  DIPPER_OPERATOR_TOKEN: 'dpo_cli_audit',
  DIPPER_STACK_FILE: path.join(dataDir, 'none.json'),
  ...(witness ? { DIPPER_AUDIT_WITNESS: witnessOf(dataDir) } : {}),
});

async function dipper(dataDir: string, args: string[], witness = false): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: projectRoot, env: cleanEnv(settings(dataDir, witness)) });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

/** Four records with their anchors in the event log, written with the key the CLI derives. */
async function folderWithRecords(witness = false): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-audit-cli-'));
  const config = loadConfig(settings(dataDir, witness));
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
  // A record's place is inside its hash: each moved record no longer matches it.
  expect(JSON.parse(reordered.stdout)).toMatchObject({ ok: false, records: 4, problems: expect.arrayContaining([expect.objectContaining({ kind: 'edited', seq: 1 }), expect.objectContaining({ kind: 'edited', seq: 2 })]) });

  const cut = await folderWithRecords();
  tamper(cut, 'DELETE FROM audit WHERE seq = 4');
  expect(await dipper(cut, ['audit', 'verify'])).toEqual({ code: 1, stdout: 'tail truncated: record 4 was appended (the event log has its anchor) and is no longer there\n' });
});

/**
 * Someone with the data folder holds the default key (it is derived from secrets.json there): they can re-chain
 * the records and write matching anchors. The witness, kept elsewhere, still sees it.
 */
describe('with a witness outside the data folder', () => {
  const key = auditKey(loadConfig(settings('/unused')), { tokenSecret: 'cli-audit-secret', operatorToken: 'dpo_cli_audit' });

  /** What a forger with the key does after changing rows: every hash and link again from the first changed row, and the anchors to match. */
  function rechain(dataDir: string): void {
    // tamper() dropped the triggers already.
    const db = new Database(paths.audit(dataDir));
    const rows = db.prepare('SELECT seq, body FROM audit ORDER BY seq').all() as { seq: number; body: string }[];
    let prev = '0'.repeat(64);
    const anchors: { seq: number; hash: string }[] = [];
    for (const row of rows) {
      const hash = chainHash(key, prev, row.seq, row.body);
      db.prepare('UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?').run(prev, hash, row.seq);
      anchors.push({ seq: row.seq, hash });
      prev = hash;
    }
    db.close();
    const events = new Database(paths.events(dataDir));
    events.prepare('DELETE FROM events WHERE type = ?').run(ANCHOR_EVENT);
    for (const a of anchors) events.prepare('INSERT INTO events (event_id, run_id, agent_id, type, ts, data) VALUES (?, ?, NULL, ?, ?, ?)').run(`forged-${a.seq}`, 'run_000000000001', ANCHOR_EVENT, Date.now(), JSON.stringify(a));
    events.close();
  }
  const cut = (dataDir: string, sql: string) => {
    tamper(dataDir, sql);
    rechain(dataDir);
  };
  const verify = (dataDir: string) => dipper(dataDir, ['audit', 'verify'], true);

  it('reports a cut tail, a wiped table, a rewritten chain and an appended copy, each of which the chain alone passes', async () => {
    const whole = await folderWithRecords(true);
    expect(await verify(whole)).toEqual({ code: 0, stdout: 'audit chain ok: 4 records, 4 anchors, witnessed to record 4\n' });
    expect(JSON.parse(fs.readFileSync(witnessOf(whole), 'utf8'))).toMatchObject({ seq: 4, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const tail = await folderWithRecords(true);
    cut(tail, 'DELETE FROM audit WHERE seq = 4');
    expect(await dipper(tail, ['audit', 'verify'])).toMatchObject({ code: 0 });
    expect(await verify(tail)).toEqual({ code: 1, stdout: 'tail truncated: the witness saw record 4, and the table ends before it\n' });

    const wiped = await folderWithRecords(true);
    cut(wiped, 'DELETE FROM audit');
    expect(await dipper(wiped, ['audit', 'verify'])).toMatchObject({ code: 0 });
    expect(await verify(wiped)).toEqual({ code: 1, stdout: 'wiped: the witness saw 4 records and the table holds none\n' });

    const edited = await folderWithRecords(true);
    cut(edited, `UPDATE audit SET body = replace(body, '"sent"', '"failed"') WHERE seq = 2`);
    expect(await dipper(edited, ['audit', 'verify'])).toMatchObject({ code: 0 });
    expect(await verify(edited)).toEqual({ code: 1, stdout: 'rewritten at 4: the record there is not the one the witness saw (the chain was edited and chained again)\n' });

    // Appended round Dipper, with the key but without the witness: a copy of an earlier record, then a new one.
    const appended = await folderWithRecords(true);
    const config = loadConfig(settings(appended));
    const store = await openAuditStore(config, key);
    await store.append({ ...auditEntry('apr_a', 'outcome'), record_id: 'apr_a/outcome-again', at: new Date().toISOString() });
    await store.append(auditEntry('apr_c', 'intent'));
    await store.close();
    expect(await dipper(appended, ['audit', 'verify'])).toMatchObject({ code: 0 });
    expect(await verify(appended)).toEqual({
      code: 1,
      stdout: "copy at 5: appended after the witness's last head, it repeats record 2\nunwitnessed at 6: appended after the witness's last head (a write whose witness update was lost, or one made round Dipper)\n",
    });

    // A witness written without the key is no witness.
    const forged = await folderWithRecords(true);
    const head = JSON.parse(fs.readFileSync(witnessOf(forged), 'utf8'));
    fs.writeFileSync(witnessOf(forged), JSON.stringify({ ...head, seq: 2 }));
    expect((await verify(forged)).stdout).toMatch(/^the witness's head \(record 2\) does not carry the audit key's signature/);
    // Eleven CLI starts one after another, each compiling the CLI through tsx: a few seconds apiece on a loaded machine.
  }, 180_000);

  it('still reports a cut tail after the next sends, which the cut chain refuses (issue 39)', async () => {
    const dataDir = await folderWithRecords(true);
    // Someone with write access to the data folder but without the key: the last two records and their anchors go.
    tamper(dataDir, 'DELETE FROM audit WHERE seq IN (3, 4)');
    const events = new Database(paths.events(dataDir));
    events.prepare("DELETE FROM events WHERE type = ? AND json_extract(data, '$.seq') IN (3, 4)").run(ANCHOR_EVENT);
    events.close();
    const cutTail = { code: 1, stdout: 'tail truncated: the witness saw record 4, and the table ends before it\n' };
    expect(await verify(dataDir)).toEqual(cutTail);
    // The next legitimate sends (and the activity's retries): each refused before anything is written.
    const store = await openAuditStore(loadConfig(settings(dataDir, true)), key);
    for (const id of ['apr_c', 'apr_c', 'apr_d']) await expect(store.append(auditEntry(id, 'intent'))).rejects.toThrow(/no record is appended until an operator has looked .*tail truncated/);
    await store.close();
    expect(await verify(dataDir)).toEqual(cutTail);
  });

  it('covers every column: a record moved to another place, or a lookup column changed, is an edit', async () => {
    const moved = await folderWithRecords();
    // The lookup column says another approval: a query by approval would find the wrong records.
    tamper(moved, "UPDATE audit SET approval_id = 'apr_b' WHERE seq = 1");
    expect(await dipper(moved, ['audit', 'verify'])).toEqual({ code: 1, stdout: 'edited at 1: the record does not match its hash\n' });
  });

  it('refuses a witness inside the data folder', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-audit-cli-'));
    const config = loadConfig({ ...settings(dataDir), DIPPER_AUDIT_WITNESS: path.join(dataDir, 'witness.json') });
    return expect(openAuditStore(config, key)).rejects.toThrow(/outside the data folder/);
  });
});
