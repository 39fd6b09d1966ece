import { withFaults } from '../../activities/faults';
import { loadConfig } from '../../src/config';

describe('injected activity failures', () => {
  it('are read from DIPPER_FAULTS, and refused when malformed', () => {
    expect(loadConfig({}).faults).toEqual({});
    expect(loadConfig({ DIPPER_FAULTS: 'workspaceBytes, recordEvents:0.25, skillExists>4' }).faults).toEqual({
      workspaceBytes: { probability: 1, after: 0 },
      recordEvents: { probability: 0.25, after: 0 },
      skillExists: { probability: 1, after: 4 },
    });
    expect(() => loadConfig({ DIPPER_FAULTS: 'recordEvents:2' })).toThrow(':probability" (0 to 1)');
    expect(() => loadConfig({ DIPPER_FAULTS: 'rm -rf' })).toThrow(/must be an activity name/);
  });

  it('never reach workflow code: a run\'s limits carry none of them, memberStart included (the spawn step reads it)', () => {
    const limits = loadConfig({ DIPPER_FAULTS: 'memberStart>2, recordEvents' }).limits;
    expect(Object.keys(limits).filter((k) => /fault|refused/i.test(k))).toEqual([]);
    expect(loadConfig({ DIPPER_FAULTS: 'memberStart>2' }).faults.memberStart).toEqual({ probability: 1, after: 2 });
  });

  it('fail the named activities as often as asked, before they run, and leave the others alone', async () => {
    let ran = 0;
    const activities = { a: async () => ++ran, b: async () => ++ran, c: async () => ++ran };
    const faulty = withFaults({ a: { probability: 1, after: 0 }, b: { probability: 0, after: 0 }, c: { probability: 1, after: 1 } }, activities);
    await expect(faulty.a()).rejects.toThrow('fault injected into a (DIPPER_FAULTS)');
    expect(ran).toBe(0);
    await expect(faulty.b()).resolves.toBe(1);
    await expect(faulty.c()).resolves.toBe(2);
    await expect(faulty.c()).rejects.toThrow('fault injected into c');
    expect(withFaults({}, activities)).toBe(activities);
  });
});
