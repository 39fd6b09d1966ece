import { randomUUID } from 'node:crypto';
import { stepWakes } from '../../../workflows/ids';
import type { Watch } from '../capabilities';
import type { ToolContext } from '../types';

/**
 * How long a call waits for its step's word before it asks the leader: only
 * for a word that was lost (the feed's own backstop reads within a second).
 */
const ANNOUNCE_BACKSTOP_MS = 3_000;

/**
 * A call whose Update answers as the leader accepts it, with `confirm`, and
 * whose step announces when what it asked for is done (workflows/types.ts,
 * StepAnnounce): the gateway gives the answer then, made by `done` from the
 * accepted answer and the step's news, or asks the leader how the call
 * ended (`outcome`) when the step failed, its word was lost, or `done`
 * makes nothing of the news. The Update's id is the key the step announces
 * on, watched before the Update is sent so no word slips past. An answer
 * without `confirm` (a run from before steps announced) is the answer.
 */
export async function afterStep<A extends object, R>(
  ctx: ToolContext,
  send: (key: string) => Promise<A | (A & { confirm: true })>,
  done: (accepted: A, news: unknown) => R | undefined,
  outcome: (key: string, accepted: A) => Promise<R>,
): Promise<R | A> {
  const runId = ctx.caller.runId;
  const key = randomUUID();
  const wakes = stepWakes(key);
  const finished = ctx.wakeups.watch(runId, wakes.done);
  const failed = ctx.wakeups.watch(runId, wakes.failed);
  try {
    const answer = await send(key);
    if (!('confirm' in answer)) return answer;
    const { confirm: _, ...accepted } = answer;
    if ((await firstWake(finished, failed, ANNOUNCE_BACKSTOP_MS)) === 'done') {
      const made = done(accepted as unknown as A, ctx.wakeups.handed(runId, wakes.done));
      if (made !== undefined) return made;
    }
    return await outcome(key, accepted as unknown as A);
  } finally {
    finished.close();
    failed.close();
  }
}

/** Which of two watched wakes came first, if either came within `ms`. */
async function firstWake(done: Watch, failed: Watch, ms: number): Promise<'done' | 'failed' | 'neither'> {
  const stop = new AbortController();
  try {
    return await Promise.race([
      done.next(ms, stop.signal).then((woken) => (woken ? 'done' : 'neither')),
      failed.next(ms, stop.signal).then((woken) => (woken ? 'failed' : 'neither')),
    ]);
  } finally {
    stop.abort();
  }
}
