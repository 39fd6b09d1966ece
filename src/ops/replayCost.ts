import { Worker } from '@temporalio/worker';
import type { History } from '../temporal';
import { replayOptions } from './replayAll';

/**
 * How long one replay of a history takes on one thread, once the replayer
 * is warm: what a fresh worker spends on it before that workflow's first
 * task there, to set against the workflow task timeout. The history is
 * replayed `times` + 1 times and the first (which also loads the bundle) is
 * left out; the median of the rest is returned, in ms.
 */
export async function replayMs(bundlePath: string, history: History, times = 3): Promise<number> {
  const took: number[] = [];
  let sentAt = 0;
  async function* again() {
    for (let i = 0; i <= times; i++) {
      sentAt = Date.now();
      yield { workflowId: `replay-cost-${i}`, history };
    }
  }
  for await (const result of Worker.runReplayHistories(replayOptions({ codePath: bundlePath }, 'replay-cost'), again())) {
    if (result.error) throw result.error;
    took.push(Date.now() - sentAt);
  }
  const warm = took.slice(1).sort((a, b) => a - b);
  return warm[Math.floor(warm.length / 2)];
}
