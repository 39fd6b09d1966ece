import { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';
import type { Temporal } from '../temporal';

const { EventType, TimeoutType } = temporal.api.enums.v1;

/** What one workflow's history says of the time between a kill and the probe's answer. */
export interface KillCost {
  workflowId: string;
  /** A workflow task the killed worker held, timed out (start to close): when, from the kill. */
  heldTimedOutS?: number;
  /** A task left on the dead worker's sticky queue, moved on (schedule to start): when, from the kill. */
  stickyTimedOutS?: number;
  /** The first workflow task completed after the kill: when, from the kill, and how long it was started. */
  firstDoneS?: number;
  firstDoneTookS?: number;
}

/**
 * Where a probe's wait after a worker kill went, read back from the
 * histories of the workflows its call asks: a task the dead worker held
 * (nothing gives it back before the workflow task timeout), a task on its
 * sticky queue (the sticky timeout), then the fresh worker's first task.
 */
export async function killCost(client: Temporal, workflowIds: string[], killedAt: number, answeredAt: number): Promise<KillCost[]> {
  return Promise.all(
    workflowIds.map(async (workflowId) => {
      const cost: KillCost = { workflowId };
      const events = (await client.handle(workflowId).fetchHistory().catch(() => undefined))?.events ?? [];
      const startedAt = new Map<number, number>();
      for (const e of events) {
        const at = tsToMs(e.eventTime);
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) startedAt.set(Number(e.eventId), at);
        if (at < killedAt - 10_000 || at > answeredAt) continue;
        const s = (at - killedAt) / 1000;
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT && at >= killedAt) {
          const a = e.workflowTaskTimedOutEventAttributes;
          if (a?.timeoutType === TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE) cost.heldTimedOutS ??= s;
          else cost.stickyTimedOutS ??= s;
        }
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && at > killedAt && cost.firstDoneS === undefined) {
          cost.firstDoneS = s;
          const began = startedAt.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId));
          if (began !== undefined) cost.firstDoneTookS = (at - began) / 1000;
        }
      }
      return cost;
    }),
  );
}

export function killCostLine(costs: KillCost[]): string {
  return costs
    .map((c) => {
      const parts = [
        c.heldTimedOutS !== undefined ? `held task timed out +${c.heldTimedOutS.toFixed(1)} s` : undefined,
        c.stickyTimedOutS !== undefined ? `sticky task moved +${c.stickyTimedOutS.toFixed(1)} s` : undefined,
        c.firstDoneS !== undefined ? `first task done +${c.firstDoneS.toFixed(1)} s (took ${c.firstDoneTookS?.toFixed(1) ?? '?'} s)` : 'no task done',
      ].filter(Boolean);
      return `${c.workflowId.split('/').slice(-2).join('/')}: ${parts.join(', ')}`;
    })
    .join('; ');
}
