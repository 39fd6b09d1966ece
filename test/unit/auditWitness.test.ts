import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileWitness, rowsWithHead } from '../../src/common/stores/audit/witness';

describe('the audit witness', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-witness-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const row = (seq: number, hash = `h${seq}`) => ({ seq, hash });

  it('only ever moves forward, whichever of two writers is slower, and takes a seq again after a failed commit', () => {
    const file = path.join(dir, 'head.json');
    const a = new FileWitness(file, 'key');
    const b = new FileWitness(file, 'key');
    a.record(row(3));
    b.record(row(2));
    expect(a.read()).toMatchObject({ seq: 3, hash: 'h3' });
    a.record(row(1));
    expect(b.read()).toMatchObject({ seq: 3 });
    // Seq 3's commit failed after its head was written; the next append is seq 3 again, with another hash.
    b.record(row(3, 'again'));
    expect(a.read()).toMatchObject({ seq: 3, hash: 'again' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('reads the rows again when the head is past them (an append between the two reads)', async () => {
    const file = path.join(dir, 'live.json');
    const w = new FileWitness(file, 'key');
    w.record(row(2));
    let reads = 0;
    const rows = async () => (++reads === 1 ? [row(1)] : [row(1), row(2)]);
    const got = await rowsWithHead(rows, () => w.read());
    expect([reads, got.rows.length, got.head?.seq]).toEqual([2, 2, 2]);
  });
});
