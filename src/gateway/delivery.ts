import { randomUUID } from 'node:crypto';
import { deliverMessagesUpdate, MAX_DELIVERY_BATCH, type DeliverInput, type DeliveryOutcome } from '../../workflows/agent/messages';
import { stateBytes } from '../common/pure/content';
import { callDeadline, underDeadline } from './deadline';
import { notSent } from '../common/serviceErrors';
import type { HandedItem, MessageDelivery } from '../registry/capabilities';
import type { TeamClient } from './teamClient';
import type { Wakeups } from './wakeups';

/** Keeps one batch's payload far below Temporal's 2 MiB limit even with 256 KiB messages. */
const MAX_BATCH_BYTES = 1024 * 1024;

interface Pending {
  input: DeliverInput;
  bytes: number;
  /** When the sender stops waiting (its tool call's deadline); undefined outside a tool call. */
  deadline: number | undefined;
  resolve: (outcome: DeliveryOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for send_message. Per recipient, at most one delivery
 * Update is in flight from this gateway; messages that arrive meanwhile
 * wait and go together in the next one. A hot recipient (a leader messaged
 * by fifty children at once) then sees a few Updates, not fifty competing
 * ones.
 */
export class DeliveryBatcher implements MessageDelivery {
  private readonly queues = new Map<string, Pending[]>();

  constructor(
    private readonly team: TeamClient,
    private readonly wakeups: Wakeups,
  ) {}

  deliver(runId: string, to: string, input: DeliverInput): Promise<DeliveryOutcome> {
    const key = `${runId}/${to}`;
    return new Promise((resolve, reject) => {
      const item = { input, bytes: stateBytes(input.content) + 256, deadline: callDeadline(), resolve, reject };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(item);
        return;
      }
      this.queues.set(key, [item]);
      void this.drain(key, runId, to);
    });
  }

  private async drain(key: string, runId: string, to: string): Promise<void> {
    const queue = this.queues.get(key)!;
    while (queue.length > 0) {
      dropAbandoned(queue);
      if (queue.length === 0) break;
      const batch = takeBatch(queue);
      try {
        // Its own deadline: this loop runs inside the first sender's call, whose deadline the later batches outlive.
        const outcomes = await underDeadline(Date.now() + this.team.callTimeoutMs, () =>
          this.team.update(this.team.agent(runId, to), deliverMessagesUpdate, [{ messages: batch.map((p) => p.input) }], randomUUID()),
        );
        batch.forEach((p, i) => p.resolve(outcomes[i]));
        if (outcomes.some((o) => o.delivered)) this.wakeups.delivered(runId, to, handedItems(batch, outcomes));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.queues.delete(key);
  }
}

/**
 * Messages whose senders were already told `unavailable` (they waited
 * behind a delivery that hung) are not sent later: a sender that retries
 * would otherwise deliver the message twice.
 */
function dropAbandoned(queue: Pending[]): void {
  const now = Date.now();
  for (let i = queue.length - 1; i >= 0; i--) {
    const p = queue[i];
    if (p.deadline !== undefined && p.deadline <= now) {
      queue.splice(i, 1);
      p.reject(notSent());
    }
  }
}

/** The messages this batch put into the inbox, as their long poll reads them. */
function handedItems(batch: Pending[], outcomes: DeliveryOutcome[]): HandedItem[] {
  return batch.flatMap(({ input }, i) => {
    const outcome = outcomes[i];
    if (!outcome?.delivered || !outcome.news) return [];
    const { news } = outcome;
    return [{ item: { seq: news.seq, message_id: input.message_id, kind: 'message' as const, from: input.from_agent_id, content: input.content, ts: news.ts }, news }];
  });
}

function takeBatch(queue: Pending[]): Pending[] {
  let bytes = 0;
  let n = 0;
  while (n < queue.length && n < MAX_DELIVERY_BATCH && (n === 0 || bytes + queue[n].bytes <= MAX_BATCH_BYTES)) {
    bytes += queue[n].bytes;
    n++;
  }
  return queue.splice(0, n);
}
