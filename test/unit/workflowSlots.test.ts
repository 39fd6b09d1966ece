import type { SlotReserveContext } from '@temporalio/worker';
import { workflowSlots } from '../../src/worker/workflowSlots';

const ctx = (isSticky: boolean) => ({ slotType: 'workflow', taskQueue: 'q', workerIdentity: 'w', workerBuildId: '', isSticky }) as SlotReserveContext;
const settled = async <T>(p: Promise<T>) => {
  let done = false;
  void p.then(() => (done = true), () => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('workflow task slots', () => {
  it('lets sticky tasks use every slot but holds tasks from the shared queue to a few at once', async () => {
    const slots = workflowSlots(6, 2);
    const shared = [slots.tryReserveSlot(ctx(false)), slots.tryReserveSlot(ctx(false))];
    expect(shared.every((p) => p !== null)).toBe(true);
    // A third replay waits, while sticky tasks still get the rest of the width.
    expect(slots.tryReserveSlot(ctx(false))).toBeNull();
    const third = slots.reserveSlot(ctx(false), new AbortController().signal);
    expect(await settled(third)).toBe(false);
    const sticky = [1, 2, 3, 4].map(() => slots.tryReserveSlot(ctx(true)));
    expect(sticky.every((p) => p !== null)).toBe(true);
    expect(slots.tryReserveSlot(ctx(true))).toBeNull();
    // A replay finishing lets the waiting one in; a sticky one finishing does not (the shared share is full).
    slots.releaseSlot({ slotInfo: { type: 'workflow', workflowType: 'x', isSticky: true }, permit: sticky[0]! });
    expect(await settled(third)).toBe(false);
    slots.releaseSlot({ slotInfo: { type: 'workflow', workflowType: 'x', isSticky: false }, permit: shared[0]! });
    expect(await settled(third)).toBe(true);
  });

  it('drops a reservation the SDK no longer wants', async () => {
    const slots = workflowSlots(2, 1);
    slots.tryReserveSlot(ctx(false));
    const abort = new AbortController();
    const waiting = slots.reserveSlot(ctx(false), abort.signal);
    abort.abort();
    await expect(waiting).rejects.toBeDefined();
    // The dropped one never takes a slot: the next replay gets the one freed.
    slots.releaseSlot({ slotInfo: { type: 'workflow', workflowType: 'x', isSticky: false }, permit: { sticky: false } });
    expect(slots.tryReserveSlot(ctx(false))).not.toBeNull();
  });
});
