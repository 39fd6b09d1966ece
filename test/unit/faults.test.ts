import { withFaults } from '../../activities/faults';
import { loadConfig } from '../../src/config';

describe('injected activity failures', () => {
  it('are read from DIPPER_FAULTS, and refused when malformed', () => {
    expect(loadConfig({}).faults).toEqual({});
    expect(loadConfig({ DIPPER_FAULTS: 'workspaceBytes, recordEvents:0.25' }).faults).toEqual({ workspaceBytes: 1, recordEvents: 0.25 });
    expect(() => loadConfig({ DIPPER_FAULTS: 'recordEvents:2' })).toThrow(/between 0 and 1/);
    expect(() => loadConfig({ DIPPER_FAULTS: 'rm -rf' })).toThrow(/must be an activity name/);
  });

  it('fail the named activities as often as asked, before they run, and leave the others alone', async () => {
    let ran = 0;
    const activities = { a: async () => ++ran, b: async () => ++ran, c: async () => ++ran };
    const faulty = withFaults({ a: 1, b: 0 }, activities);
    await expect(faulty.a()).rejects.toThrow('fault injected into a (DIPPER_FAULTS)');
    expect(ran).toBe(0);
    await expect(faulty.b()).resolves.toBe(1);
    await expect(faulty.c()).resolves.toBe(2);
    expect(withFaults({}, activities)).toBe(activities);
  });
});
