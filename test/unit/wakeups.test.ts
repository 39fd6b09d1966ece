import { Wakeups } from '../../src/gateway/wakeups';

describe('inbox wakeups', () => {
  it('end a wait early for the woken agent only, and leave no listener behind', async () => {
    const wakeups = new Wakeups();
    let aDone = false;
    let bDone = false;
    const a = wakeups.wait('run_1', 'ag_a', 10_000).then(() => (aDone = true));
    const b = wakeups.wait('run_1', 'ag_b', 200).then(() => (bDone = true));
    wakeups.wake('run_1', 'ag_a');
    await a;
    expect(aDone).toBe(true);
    expect(bDone).toBe(false);
    await b;
    expect(bDone).toBe(true);
    const emitter = (wakeups as unknown as { emitter: import('node:events').EventEmitter }).emitter;
    expect(emitter.eventNames()).toEqual([]);
  });
});
