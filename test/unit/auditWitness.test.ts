import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditChainBroken, FileWitness } from '../../src/common/stores/audit/witness';
import { verifyAudit } from '../../src/common/stores/audit/verify';

describe('the audit witness', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-witness-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const row = (seq: number, hash = `h${seq}`) => ({ seq, hash });

  it('only ever moves forward: a slower writer leaves it, the same seq with another hash is refused', () => {
    const file = path.join(dir, 'head.json');
    const a = new FileWitness(file, 'key');
    const b = new FileWitness(file, 'key');
    a.record(row(3));
    b.record(row(2));
    expect(a.read()).toMatchObject({ seq: 3, hash: 'h3' });
    // A chain cut behind the head and appended to again offers the head's seq with another hash: never taken.
    expect(() => b.record(row(3, 'again'))).toThrow(AuditChainBroken);
    expect(a.read()).toMatchObject({ seq: 3, hash: 'h3' });
    b.record(row(4));
    expect(a.read()).toMatchObject({ seq: 4, hash: 'h4' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a chain that ends before its head, or holds another record there, and says so plainly', () => {
    const w = new FileWitness(path.join(dir, 'check.json'), 'key');
    w.record(row(6));
    const head = w.read();
    expect(() => w.mustMatch(head, 6, 'h6')).not.toThrow();
    expect(() => w.mustMatch(head, 7, 'h6')).not.toThrow();
    expect(() => w.mustMatch(head, 4, undefined)).toThrow(/no record is appended until an operator has looked .*tail truncated: the witness saw record 6/);
    expect(() => w.mustMatch(head, 6, 'other')).toThrow(/rewritten at 6/);
    expect(() => new FileWitness(w.file, 'another key').mustMatch(head, 6, 'h6')).toThrow(/does not carry the audit key's signature/);
  });

  it('on a live chain, waits for a head written just after its record, and reports a record the witness never reaches', async () => {
    const file = path.join(dir, 'live.json');
    const w = new FileWitness(file, 'key');
    w.record(row(1));
    const body = (n: number) => JSON.stringify({ record_id: `r${n}`, n });
    const rows = [1, 2].map((seq) => ({ seq, record_id: `r${seq}`, body: body(seq), prev_hash: '', hash: `h${seq}` }));
    // Record 2 is committed; its witness write lands just after verify read the head (the chain's own check is not this test's).
    let reads = 0;
    const lagging = {
      read: () => {
        const head = w.read();
        if (++reads === 1) setTimeout(() => w.record(row(2)), 10);
        return head;
      },
    };
    const late = await verifyAudit({ key: 'key', anchors: async () => [], rows: async () => rows, witness: lagging, settleMs: 50 });
    expect(reads).toBe(2);
    expect(late.witness).toMatchObject({ seq: 2 });
    expect(late.problems.filter((p) => !['edited', 'reordered', 'removed'].includes(p.kind))).toEqual([]);
    rows.push({ seq: 3, record_id: 'r3', body: body(3), prev_hash: '', hash: 'h3' });
    const lost = await verifyAudit({ key: 'key', anchors: async () => [], rows: async () => rows, witness: w, settleMs: 50 });
    expect(lost.problems.filter((p) => p.kind === 'unwitnessed').map((p) => p.seq)).toEqual([3]);
  });

  it('refuses to start afresh where the witness\'s folder is gone (an unmounted volume)', () => {
    expect(() => new FileWitness(path.join(dir, 'unmounted', 'head.json'), 'key').read()).toThrow(/folder is not there/);
  });
});
