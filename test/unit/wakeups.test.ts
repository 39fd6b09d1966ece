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

  it('count a wake that came between the look and the wait, and answer false when the window passes in silence', async () => {
    const wakeups = new Wakeups();
    const watch = wakeups.watch('run_1', 'ag_a');
    // Woken while the poll was still asking Temporal: the next wait returns at once.
    wakeups.wake('run_1', 'ag_a');
    expect(await watch.next(60_000)).toBe(true);
    // The wake was used up; another agent's wake does not count.
    wakeups.wake('run_1', 'ag_b');
    expect(await watch.next(50)).toBe(false);
    const aborted = new AbortController();
    const pending = watch.next(60_000, aborted.signal);
    aborted.abort();
    expect(await pending).toBe(false);
    watch.close();
    const emitter = (wakeups as unknown as { emitter: import('node:events').EventEmitter }).emitter;
    expect(emitter.eventNames()).toEqual([]);
  });

  it('hand news to a waiter that saw it coming: once a call bringing it settles, its news is there, and a failed one brings none', async () => {
    const wakeups = new Wakeups();
    let answer!: (value: { over: string }) => void;
    const answered = wakeups.bring('run_1', 'q_1', () => new Promise<{ over: string }>((r) => (answer = r)), (done) => done.over);
    // A waiter woken meanwhile (the question's own wake overtook the answer) waits for the call, not for a clock.
    let seen: unknown = 'not yet';
    const waiter = wakeups.coming('run_1', 'q_1').then(() => (seen = wakeups.handed('run_1', 'q_1')));
    await new Promise((r) => setImmediate(r));
    expect(seen).toBe('not yet');
    answer({ over: 'Yes' });
    await waiter;
    expect(seen).toBe('Yes');
    await answered;

    const failed = wakeups.bring('run_1', 'q_2', () => Promise.reject(new Error('refused')), () => 'never');
    await expect(failed).rejects.toThrow('refused');
    await wakeups.coming('run_1', 'q_2');
    expect(wakeups.handed('run_1', 'q_2')).toBeUndefined();
  });

  it('hand a long poll the items this process delivered only when nothing it has not seen can lie between them', () => {
    const wakeups = new Wakeups();
    const item = (seq: number, before: number) => ({
      item: { seq, message_id: `m${seq}`, kind: 'message' as const, from: 'ag_b', content: `words ${seq}`, ts: seq },
      news: { seq, ts: seq, before, status: 'active' as const },
    });
    // Put when item 3 was the newest pending: after cursor 3, items 4 and 5 are all there is.
    wakeups.delivered('run_1', 'ag_a', [item(4, 3), item(5, 4)]);
    expect(wakeups.deliveredAfter('run_1', 'ag_a', 3, 100)?.items.map((i) => i.seq)).toEqual([4, 5]);
    // A poll that has not seen item 3 cannot be handed 4: it asks the workflow.
    expect(wakeups.deliveredAfter('run_1', 'ag_a', 2, 100)).toBeUndefined();
    // Item 7 came after 6, which this process did not deliver (a workflow's own item): the chain stops at 5.
    wakeups.delivered('run_1', 'ag_a', [item(7, 6)]);
    expect(wakeups.deliveredAfter('run_1', 'ag_a', 3, 100)?.items.map((i) => i.seq)).toEqual([4, 5]);
    // Past what the poll already has, and within its limit.
    expect(wakeups.deliveredAfter('run_1', 'ag_a', 4, 100)?.items.map((i) => i.seq)).toEqual([5]);
    expect(wakeups.deliveredAfter('run_1', 'ag_a', 3, 1)?.items.map((i) => i.seq)).toEqual([4]);
    expect(wakeups.deliveredAfter('run_1', 'ag_a', 5, 100)).toBeUndefined();
    // Another agent's items are its own.
    expect(wakeups.deliveredAfter('run_1', 'ag_b', 3, 100)).toBeUndefined();
  });
});
