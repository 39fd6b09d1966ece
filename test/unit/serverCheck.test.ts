import { TEMPORAL_SERVER_VERSION } from '../../src/common/version';
import { olderThan, serverFindings } from '../../src/worker/serverCheck';

describe('what a worker says about the Temporal server it finds', () => {
  it('compares releases by their numbers, not as text', () => {
    expect(olderThan('1.9.0', '1.10.0')).toBe(true);
    expect(olderThan('1.30.0', '1.29.1')).toBe(false);
    expect(olderThan('v1.32.0', '1.32.0')).toBe(false);
    expect(olderThan('1.32.0-rc.1', '1.32.1')).toBe(true);
    expect(olderThan('dev', '1.32.0')).toBeUndefined();
  });

  it('says nothing on the release Dipper is tested on, or a newer one', () => {
    expect(serverFindings(TEMPORAL_SERVER_VERSION.slice(1))).toEqual([]);
    expect(serverFindings('1.33.2')).toEqual([]);
  });

  it('names what is off, and why, on an older server', () => {
    const on129 = serverFindings('1.29.1');
    expect(on129).toHaveLength(1);
    expect(on129[0]).toMatchObject({ level: 'warn', message: expect.stringContaining('older than 1.30.0: failing workflow tasks are not flagged') });
    const on127 = serverFindings('1.27.4').map((f) => f.message);
    expect(on127).toEqual([expect.stringContaining('DIPPER_WORKER_VERSIONING=off'), expect.stringContaining('dipper doctor still finds them')]);
  });

  it('says the release is unknown when the server does not give one', () => {
    expect(serverFindings('')).toEqual([{ level: 'warn', message: expect.stringContaining('did not say its release') }]);
  });
});
