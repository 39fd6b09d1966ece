import path from 'node:path';
import { describeSoak, runSoak, type SoakOptions } from '../../src/soak/soak';
import { readTestEnv, testDataRoot } from '../setup/env';

/**
 * The seeded CI version of `npm run soak -- --matrix`: a team works while
 * the worker, the gateway and the Temporal server are each SIGKILLed, then
 * every history is replayed and the invariants checked. A short sticky
 * timeout keeps each outage to a few seconds.
 */
function options(seed: number, extra: Partial<SoakOptions>): SoakOptions {
  return {
    seed,
    kills: 4,
    agents: 5,
    warmupSeconds: 8,
    killEverySeconds: [1, 4],
    maxDownSeconds: 2,
    pauseMs: 250,
    // Messages offered whatever the answers, half keyed and repeated after `unavailable` or `outcome_unknown`.
    offerPerSecond: 1,
    dataRoot: path.join(testDataRoot, `soak-${seed}`),
    bundlePath: readTestEnv().bundlePath,
    basePort: 29433,
    env: { DIPPER_STICKY_TIMEOUT_MS: '2000' },
    progress: (line) => process.stderr.write(`soak: ${line}\n`),
    ...extra,
  };
}

describe('crash soak', () => {
  // Its length is the machine's (four recoveries of 15-35 s, a drain, a replay): a 2-core CI machine took over 240 s,
  // and the same with eight busy loops and the other test lane beside it over 420 s.
  it('loses, duplicates and breaks nothing across kills of the worker, the gateway and the Temporal server (seed 11)', async () => {
    const report = await runSoak(options(11, { matrix: { gateway: 1, temporal: 1 } }));
    process.stderr.write(`${describeSoak(report)}\n`);
    expect(report.kills).toBe(4);
    expect([...report.killed].sort()).toEqual(['gateway', 'temporal', 'worker', 'worker']);
    expect(report.acknowledgedSends).toBeGreaterThan(50);
    expect(report.replay.replayed).toBeGreaterThanOrEqual(report.agents);
    expect(report.replay.nondeterministic).toEqual([]);
    expect(report.replay.stuck).toEqual([]);
    expect(report.replay.failed).toEqual([]);
    expect({ lost: report.lost, duplicated: report.duplicated, unanswered: report.unanswered }).toEqual({ lost: 0, duplicated: 0, unanswered: [] });
    expect(report.brokenBeforeRepair).toBe(0);
    // Every refusal was true: nothing refused was delivered, no keyed repeat found a refused message delivered.
    expect(report.messages.offered).toBeGreaterThan(50);
    expect(report.messages.untrue).toEqual([]);
    // Questions asked through the kills: each answered once and rightly, one question workflow each however often re-issued.
    expect(report.questions.asked).toBeGreaterThan(0);
    expect(report.questions).toMatchObject({ answered: report.questions.asked, wrong: 0, unanswered: 0, workflows: report.questions.asked });
    // Reviews through the kills: members' (their leader's gate opens and closes) and the root's, answered by a person.
    expect(report.reviews).toBeGreaterThan(0);
    expect(report.questions.rootReviews).toBeGreaterThan(0);
    // Keyed task creates through the kills: each key answered, and exactly one task per key on the board.
    expect(report.tasks.keyed).toBeGreaterThan(0);
    expect(report.tasks).toMatchObject({ answered: report.tasks.keyed, onBoard: report.tasks.keyed, duplicates: 0, missing: 0 });
    // Approval-gated iSphere sends through the kills: each delivered once, each with its two audit records, the chain whole.
    expect(report.sends.keyed).toBeGreaterThan(0);
    expect(report.sends).toMatchObject({ answered: report.sends.keyed, delivered: report.sends.keyed, duplicates: 0, missing: 0, auditPairs: report.sends.keyed, chainOk: true });
  }, 600_000);
});
