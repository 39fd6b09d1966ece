import type { CustomSlotSupplier, SlotPermit, SlotReserveContext, WorkflowSlotInfo } from '@temporalio/worker';

interface Permit extends SlotPermit {
  sticky: boolean;
}

interface Waiter {
  sticky: boolean;
  grant: (permit: Permit) => void;
}

/**
 * Workflow task slots that bound how many tasks a worker takes from the
 * shared queue at once, while tasks from its own sticky queue may use every
 * slot. A task from the shared queue is one this worker does not hold in
 * its cache: after a restart, every task is, and each means replaying a
 * whole history on the one workflow thread. Forty of those taken at once
 * (the SDK's default) each wait behind the others until most pass the task
 * timeout, are taken again and replayed again; a few at a time finish in
 * turn. Tasks of workflows the worker already holds (sticky) are cheap, so
 * steady traffic keeps the full width (docs/decisions.md).
 */
export function workflowSlots(total: number, fromShared: number): CustomSlotSupplier<WorkflowSlotInfo> {
  let held = 0;
  let heldShared = 0;
  const waiting: Waiter[] = [];
  const fits = (sticky: boolean) => held < total && (sticky || heldShared < fromShared);
  const take = (sticky: boolean): Permit => {
    held++;
    if (!sticky) heldShared++;
    return { sticky };
  };
  const wakeWaiters = () => {
    for (let i = 0; i < waiting.length; ) {
      const w = waiting[i];
      if (!fits(w.sticky)) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      w.grant(take(w.sticky));
    }
  };
  return {
    type: 'custom',
    reserveSlot(ctx: SlotReserveContext, abortSignal: AbortSignal): Promise<SlotPermit> {
      if (fits(ctx.isSticky)) return Promise.resolve(take(ctx.isSticky));
      return new Promise((resolve, reject) => {
        const waiter: Waiter = { sticky: ctx.isSticky, grant: resolve };
        waiting.push(waiter);
        abortSignal.addEventListener(
          'abort',
          () => {
            const at = waiting.indexOf(waiter);
            if (at < 0) return;
            waiting.splice(at, 1);
            reject(abortSignal.reason ?? new DOMException('slot reservation aborted', 'AbortError'));
          },
          { once: true },
        );
      });
    },
    tryReserveSlot(ctx: SlotReserveContext): SlotPermit | null {
      return fits(ctx.isSticky) ? take(ctx.isSticky) : null;
    },
    markSlotUsed() {},
    releaseSlot(ctx) {
      held--;
      if (!(ctx.permit as Permit).sticky) heldShared--;
      wakeWaiters();
    },
  };
}
