import { ALL_GENERATIONS } from '../../src/common/pure/revocations';
import { RevocationState } from '../../workflows/tokens/state';

describe("the token registry's state", () => {
  it('numbers each change and answers only what changed after a version', () => {
    const s = new RevocationState();
    s.revoke({ runId: 'run_a', at: 10 });
    s.revoke({ runId: 'run_b', agentId: 'ag_1', belowGen: 2, at: 20 });
    expect(s.since(0)).toEqual({
      version: 2,
      entries: [
        { key: 'run_a', below: ALL_GENERATIONS, at: 10 },
        { key: 'run_b/ag_1', below: 2, at: 20 },
      ],
    });
    expect(s.since(1)).toEqual({ version: 2, entries: [{ key: 'run_b/ag_1', below: 2, at: 20 }] });
    expect(s.since(2)).toEqual({ version: 2, entries: [] });
  });

  it('only ever widens a revocation: a late, narrower one changes nothing and counts no version', () => {
    const s = new RevocationState();
    s.revoke({ runId: 'run_b', agentId: 'ag_1', belowGen: 3, at: 20 });
    s.revoke({ runId: 'run_b', agentId: 'ag_1', belowGen: 2, at: 30 });
    expect(s.since(0)).toEqual({ version: 1, entries: [{ key: 'run_b/ag_1', below: 3, at: 20 }] });
    s.revoke({ runId: 'run_b', agentId: 'ag_1', belowGen: 5, at: 15 });
    // Wider: a new version, and the later of the two times (its tokens expire last).
    expect(s.since(1)).toEqual({ version: 2, entries: [{ key: 'run_b/ag_1', below: 5, at: 20 }] });
  });

  it('carries into the next run only entries whose tokens may still live, with the version', () => {
    const s = new RevocationState([{ key: 'run_old', below: ALL_GENERATIONS, at: 5, v: 7 }], 7);
    s.revoke({ runId: 'run_new', at: 50 });
    expect(s.carried(40)).toEqual({ version: 8, entries: [{ key: 'run_new', below: ALL_GENERATIONS, at: 50, v: 8 }] });
  });
});
