import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';

/**
 * A workflow sandbox loads every module of the bundle for each workflow it starts or replays, so what
 * src/common/pure/decisionProof.ts loads with itself is paid by every workflow: its curve, hash and byte helpers wait
 * for the first proof. Checked in a process of its own, where Node's module cache says what was loaded.
 */
describe('decisionProof loads its cryptography at first use', () => {
  it('loads no @noble module with itself, and all it needs once a proof is checked', () => {
    const script = `
      const proof = require(${JSON.stringify(path.join(__dirname, '..', '..', 'src', 'common', 'pure', 'decisionProof.ts'))});
      const noble = () => Object.keys(require.cache).filter((k) => k.includes('@noble')).length;
      const before = noble();
      const hex = proof.sha256Hex('dipper');
      const seed = new Uint8Array(32).fill(7);
      const claim = { kind: 'question_answer', run_id: 'r', subject_id: 'q', content_sha256: null, file_sha256: null, decision: 'yes', decider: 'op', via: 'console', reason: null, delivery_id: null, at: 1 };
      const verified = proof.proven(claim, proof.prove(claim, [seed]), [proof.publicKeyOf(seed)]);
      process.stdout.write(JSON.stringify({ before, after: noble(), hex, verified }));
    `;
    const out = JSON.parse(execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8' }));
    expect(out.before).toBe(0);
    expect(out.after).toBeGreaterThan(0);
    expect(out.hex).toBe(crypto.createHash('sha256').update('dipper').digest('hex'));
    expect(out.verified).toBe(true);
  });
});
