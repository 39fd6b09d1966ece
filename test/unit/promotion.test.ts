import Long from 'long';
import type { DeploymentInfo } from '../../src/temporal';
import { promotionVerdict } from '../../src/versioning/promote';

/** A deployment as the server describes it: the current build, and each build's first sighting and first time current. */
function deployment(current: string | undefined, builds: Record<string, { seen: number; wasCurrent?: number }>): DeploymentInfo {
  const at = (ms: number) => ({ seconds: Long.fromNumber(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
  return {
    routingConfig: current ? { currentDeploymentVersion: { buildId: current } } : {},
    versionSummaries: Object.entries(builds).map(([buildId, b]) => ({
      deploymentVersion: { buildId },
      createTime: at(b.seen),
      ...(b.wasCurrent === undefined ? {} : { firstActivationTime: at(b.wasCurrent) }),
    })),
  };
}

describe('whether a worker makes its build current', () => {
  it('waits until the server knows the deployment and the build', () => {
    expect(promotionVerdict(undefined, 'b2', 'newer').act).toBe('wait');
    expect(promotionVerdict(deployment('b1', { b1: { seen: 1000 } }), 'b2', 'newer').act).toBe('wait');
  });

  it('promotes a build first seen after the current one, and one where none is current', () => {
    expect(promotionVerdict(deployment('b1', { b1: { seen: 1000, wasCurrent: 1000 }, b2: { seen: 2000 } }), 'b2', 'newer').act).toBe('promote');
    expect(promotionVerdict(deployment(undefined, { b2: { seen: 2000 } }), 'b2', 'newer').act).toBe('promote');
  });

  it('leaves alone a current build first seen later (an old build restarted after an upgrade)', () => {
    const v = promotionVerdict(deployment('b2', { b1: { seen: 1000 }, b2: { seen: 2000, wasCurrent: 2000 } }), 'b1', 'newer');
    expect(v).toEqual({ act: 'leave', why: 'the current version b2 was first seen after this one' });
  });

  it('never takes back its place from a build an operator chose instead (a rollback holds when the newer build restarts)', () => {
    const v = promotionVerdict(deployment('b1', { b1: { seen: 1000, wasCurrent: 1000 }, b2: { seen: 2000, wasCurrent: 2000 } }), 'b2', 'newer');
    expect(v.act).toBe('leave');
  });

  it('is done when its build is current, and follows `always` and `never` as told', () => {
    expect(promotionVerdict(deployment('b2', { b2: { seen: 2000, wasCurrent: 2000 } }), 'b2', 'newer').act).toBe('done');
    expect(promotionVerdict(deployment('b2', { b1: { seen: 1000 }, b2: { seen: 2000, wasCurrent: 2000 } }), 'b1', 'always').act).toBe('promote');
    expect(promotionVerdict(deployment(undefined, { b1: { seen: 1000 } }), 'b1', 'never').act).toBe('leave');
  });
});
