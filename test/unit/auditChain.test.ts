import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { AuditChainBroken, AuditKeyConflict, AuditRecordConflict, checkAgainstWitness, FileWitness, openAuditStore, verifyChain, type Anchor, type AuditStore } from '../../src/common/stores/audit';
import { auditEntry } from '../fixtures/isphere/auditEntries';

/**
 * The audit chain on both backends (PostgreSQL when DIPPER_TEST_DATABASE_URL
 * names a server): appends are idempotent per record, a key is used once,
 * the database refuses changes, and verify names what a tamperer did.
 */
const KEY = 'k'.repeat(64);
const pgUrl = process.env.DIPPER_TEST_DATABASE_URL;

/** A fresh database per PostgreSQL case, so the chain starts empty and tampering stays in it. */
async function freshPg(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `dipper_audit_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = pgUrl!.replace(/\/[^/?]+(\?|$)/, `/${name}$1`);
  return {
    url,
    drop: async () => {
      const a = new Client({ connectionString: pgUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

interface Backend {
  /** Appends as Dipper does, moving the witness. */
  store: AuditStore;
  /** The witness's file, outside the data folder. */
  witness: string;
  /** Another store on the same chain, without the witness: someone with the key appending round Dipper. */
  bypass(): Promise<AuditStore>;
  /** Runs SQL as someone with database access, triggers out of the way. */
  tamper(sql: string): Promise<void>;
  /**
   * Makes the commit of the record at `seq` fail, after its insert went through; `false` takes the trap away.
   * PostgreSQL only: a deferred constraint trigger does it there. SQLite's deferred foreign keys did it too, but not
   * reliably once another test file had loaded better-sqlite3 in the same jest worker.
   */
  failCommitAt?(seq: number | false): Promise<void>;
  done(): Promise<void>;
}

/** A witness per case, in a folder of its own beside the data. */
const witnessFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-audit-witness-')), 'head.json');

const backends: [string, () => Promise<Backend>][] = [
  [
    'sqlite',
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-audit-'));
      const witness = witnessFile();
      const store = await openAuditStore({ dataDir, isphere: { auditWitness: witness } }, KEY);
      return {
        store,
        witness,
        bypass: () => openAuditStore({ dataDir }, KEY),
        tamper: async (sql) => {
          const db = new Database(path.join(dataDir, 'audit.db'));
          db.exec(`DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete; ${sql.replace(/\bAUDIT\b/g, 'audit')}`);
          db.close();
        },
        done: () => store.close(),
      };
    },
  ],
  ...(pgUrl
    ? [
        [
          'postgresql',
          async () => {
            const db = await freshPg();
            const witness = witnessFile();
            const store = await openAuditStore({ dataDir: '/nonexistent', databaseUrl: db.url, isphere: { auditWitness: witness } }, KEY);
            const run = async (sql: string) => {
              const c = new Client({ connectionString: db.url });
              await c.connect();
              await c.query(sql);
              await c.end();
            };
            return {
              store,
              witness,
              bypass: () => openAuditStore({ dataDir: '/nonexistent', databaseUrl: db.url }, KEY),
              tamper: (sql: string) => run(`ALTER TABLE dipper_isphere_audit DISABLE TRIGGER dipper_isphere_audit_no_change; ${sql.replace(/\bAUDIT\b/g, 'dipper_isphere_audit')}`),
              failCommitAt: (seq: number | false) =>
                seq === false
                  ? run('DROP TRIGGER trap ON dipper_isphere_audit')
                  : // A deferred constraint trigger runs at COMMIT: the insert goes through, the commit does not.
                    run(`CREATE OR REPLACE FUNCTION trap() RETURNS trigger AS $$ BEGIN IF NEW.seq = ${seq} THEN RAISE EXCEPTION 'the commit fails'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
                         CREATE CONSTRAINT TRIGGER trap AFTER INSERT ON dipper_isphere_audit DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION trap();`),
              done: async () => {
                await store.close();
                await db.drop();
              },
            };
          },
        ] as [string, () => Promise<Backend>],
      ]
    : []),
];

describe.each(backends)('the audit chain on %s', (_name, open) => {
  let b: Backend;
  let anchors: Anchor[];
  beforeEach(async () => {
    b = await open();
    anchors = [];
    for (const id of ['apr_1', 'apr_2', 'apr_3']) {
      for (const kind of ['intent', 'outcome'] as const) {
        const row = await b.store.append(auditEntry(id, kind));
        anchors.push({ seq: row.seq, hash: row.hash });
      }
    }
  });
  afterEach(() => b.done());

  it('appends in one contiguous chain that verifies, and returns a repeated record instead of adding it', async () => {
    const rows = await b.store.rows();
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(verifyChain(rows, KEY, anchors)).toEqual([]);
    const again = await b.store.append(auditEntry('apr_2', 'intent'));
    expect(again).toMatchObject({ seq: 3, reused: true });
    expect(await b.store.rows()).toHaveLength(6);
    await expect(b.store.append(auditEntry('apr_2', 'intent', { content_sha256: 'cd'.repeat(32) }))).rejects.toBeInstanceOf(AuditRecordConflict);
    expect((await b.store.ofApproval('apr_2')).map((e) => e.kind)).toEqual(['intent', 'outcome']);
    // A chain checked with another key does not verify: the key is what a tamperer lacks.
    expect(verifyChain(rows, 'other-key', anchors).map((p) => p.kind)).toEqual(Array(6).fill('edited'));
  });

  it('takes an idempotency key once per run, agent and tool: another approval with it is refused', async () => {
    await b.store.append(auditEntry('apr_k1', 'intent', { key_sha256: 'ef'.repeat(32) }));
    await expect(b.store.append(auditEntry('apr_k2', 'intent', { key_sha256: 'ef'.repeat(32) }))).rejects.toBeInstanceOf(AuditKeyConflict);
    // The same key in another run is another key.
    expect((await b.store.append(auditEntry('apr_k3', 'intent', { key_sha256: 'ef'.repeat(32), run_id: 'run_000000000002' }))).reused).toBe(false);
  });

  it('refuses updates and deletes in the database itself', async () => {
    const sqlite = _name === 'sqlite';
    const table = sqlite ? 'audit' : 'dipper_isphere_audit';
    // The store's own connection: what it wrote is certainly there to change. The answer names the rows a statement
    // changed when it was not refused, so a failure says whether the trigger was missing or the row was.
    const attempt = async (sql: string): Promise<string> => {
      try {
        if (sqlite) return `changed ${(b.store as unknown as { db: Database.Database }).db.prepare(sql).run().changes} rows`;
        const res = (await (b.store as unknown as { pool: { query(sql: string): Promise<{ rowCount: number }> } }).pool.query(sql)) as { rowCount: number };
        return `changed ${res.rowCount} rows`;
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(await b.store.rows()).toHaveLength(6);
    expect(await attempt(`UPDATE ${table} SET body = '{}' WHERE seq = 1`)).toMatch(/append-only/);
    expect(await attempt(`DELETE FROM ${table} WHERE seq = 6`)).toMatch(/append-only/);
    expect(verifyChain(await b.store.rows(), KEY, anchors)).toEqual([]);
  });

  it.each([
    ['an edited record', `UPDATE AUDIT SET body = replace(body, 'alice', 'mallory') WHERE seq = 2`, [{ kind: 'edited', seq: 2 }]],
    ['a removed record', 'DELETE FROM AUDIT WHERE seq = 3', [{ kind: 'removed', seq: 3 }]],
    ['two records swapped', 'UPDATE AUDIT SET seq = -seq WHERE seq IN (2, 4); UPDATE AUDIT SET seq = 4 WHERE seq = -2; UPDATE AUDIT SET seq = 2 WHERE seq = -4', null],
    ['the last record removed', 'DELETE FROM AUDIT WHERE seq = 6', [{ kind: 'tail_truncated', seq: 6 }]],
  ])('catches %s', async (_what, sql, want) => {
    await b.tamper(sql);
    const problems = verifyChain(await b.store.rows(), KEY, anchors);
    if (want) expect(problems).toEqual(want);
    else {
      // A record's place is inside its hash: both moved records no longer match theirs.
      expect(problems.filter((p) => p.kind === 'edited').map((p) => p.seq)).toEqual([2, 4]);
    }
  });

  const head = () => new FileWitness(b.witness, KEY).read();
  const againstWitness = async () => checkAgainstWitness(await b.store.rows(), head(), KEY);

  (_name === 'postgresql' ? it : it.skip)('moves the witness only after a commit: a commit that fails leaves it, and the next append moves it', async () => {
    expect(head()).toMatchObject({ seq: 6, hash: anchors[5].hash });
    await b.failCommitAt!(7);
    await expect(b.store.append(auditEntry('apr_4', 'intent'))).rejects.toThrow();
    expect([(await b.store.rows()).length, head()?.seq]).toEqual([6, 6]);
    expect(await againstWitness()).toEqual([]);
    await b.failCommitAt!(false);
    const row = await b.store.append(auditEntry('apr_4', 'intent'));
    expect(head()).toMatchObject({ seq: 7, hash: row.hash });
    expect(await againstWitness()).toEqual([]);
  });

  it('after a crash between a commit and its witness write, lags by one record, says so, and catches up on the retry', async () => {
    // The witness write fails where a crash would stop it: its draft's name is taken by a folder.
    const draft = `${b.witness}.${process.pid}.tmp`;
    fs.mkdirSync(draft);
    await expect(b.store.append(auditEntry('apr_4', 'intent'))).rejects.toThrow('the audit witness could not be written (EISDIR): record 7 is committed');
    fs.rmdirSync(draft);
    expect([(await b.store.rows()).length, head()?.seq]).toEqual([7, 6]);
    expect(await againstWitness()).toEqual([{ kind: 'unwitnessed', seq: 7 }]);
    // The activity's retry appends the same record again: it is reused, and the witness reaches it.
    expect(await b.store.append(auditEntry('apr_4', 'intent'))).toMatchObject({ seq: 7, reused: true });
    expect([head()?.seq, await againstWitness()]).toEqual([7, []]);
    expect((await b.store.append(auditEntry('apr_4', 'outcome'))).seq).toBe(8);
    expect([head()?.seq, await againstWitness()]).toEqual([8, []]);
  });

  it('refuses every append to a chain cut behind its witness, so later sends cannot hide the cut (issue 39)', async () => {
    const witnessed = head();
    // Someone with the database but without the key cuts the last two records and their anchors.
    await b.tamper('DELETE FROM AUDIT WHERE seq IN (5, 6)');
    const left = anchors.slice(0, 4);
    expect(verifyChain(await b.store.rows(), KEY, left)).toEqual([]);
    expect(await againstWitness()).toEqual([{ kind: 'witnessed_tail_cut', seq: 6 }]);
    // The next legitimate send: refused before anything is written, the witness where it was.
    await expect(b.store.append(auditEntry('apr_4', 'intent'))).rejects.toThrow(AuditChainBroken);
    await expect(b.store.append(auditEntry('apr_4', 'intent'))).rejects.toThrow(/tail truncated: the witness saw record 6/);
    expect([(await b.store.rows()).length, head()]).toEqual([4, witnessed]);
    // With the key too, records appended round Dipper up to the head and past it take the head's place: still refused.
    const bypass = await b.bypass();
    for (const id of ['apr_x', 'apr_y', 'apr_z']) await bypass.append(auditEntry(id, 'intent'));
    await bypass.close();
    await expect(b.store.append(auditEntry('apr_4', 'intent'))).rejects.toThrow(/rewritten at 6/);
    expect(head()).toEqual(witnessed);
    expect(await againstWitness()).toEqual([{ kind: 'rewritten', seq: 6 }, { kind: 'unwitnessed', seq: 7 }]);
  });
});

it('serialises appends from two processes writing one SQLite file at once into one chain', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-audit-two-'));
  const file = path.join(dataDir, 'audit.db');
  const writer = path.join(__dirname, '..', 'fixtures', 'isphere', 'auditWriter.ts');
  const run = promisify(execFile);
  await (await openAuditStore({ dataDir }, KEY)).close();
  // One witness for both, as on a host whose gateway and worker share a chain: its head moves after each commit, under the chain's lock.
  const witness = witnessFile();
  const writing = Promise.all(['a', 'b'].map((name) => run(process.execPath, ['--import', 'tsx', writer, file, KEY, name, '120', witness])));
  const deadline = Date.now() + 30_000;
  while (!['a', 'b'].every((n) => fs.existsSync(`${file}.${n}.ready`))) {
    if (Date.now() > deadline) throw new Error('the writers did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  fs.writeFileSync(`${file}.go`, '');
  const spans = (await writing).map(({ stdout }) => JSON.parse(stdout) as { first: number; last: number });
  const store = await openAuditStore({ dataDir }, KEY);
  const rows = await store.rows();
  await store.close();
  expect(rows).toHaveLength(240);
  expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 240 }, (_, i) => i + 1));
  expect(verifyChain(rows, KEY, [])).toEqual([]);
  expect(checkAgainstWitness(rows, new FileWitness(witness, KEY).read(), KEY)).toEqual([]);
  expect(new FileWitness(witness, KEY).read()).toMatchObject({ seq: 240 });
  // Both writers were trying to append at the same time (or the test proved nothing about serialising): each began before the other ended.
  const [a, b] = spans;
  expect(a.first < b.last && b.first < a.last).toBe(true);
});
