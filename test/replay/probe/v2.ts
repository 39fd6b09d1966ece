import { proxyActivities, sleep } from '@temporalio/workflow';

const { probeActivity } = proxyActivities<{ probeActivity(): Promise<void> }>({ startToCloseTimeout: '1 minute' });

/** Same name as in v1, but an activity where v1 started a timer: its v1 histories no longer replay. */
export async function changedProbe(): Promise<string> {
  await probeActivity();
  return 'v2';
}

export async function steadyProbe(): Promise<string> {
  await sleep(1);
  return 'steady';
}

// goneProbe is gone from this version: its histories cannot replay at all.

export async function stuckProbe(): Promise<void> {
  throw new Error('stuck on purpose');
}
