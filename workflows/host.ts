import { proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { hostQueue } from './ids';


/**
 * Activities that act on a run's host: its folders, plan files and agent
 * processes. A run is pinned to a host when workers name theirs
 * (DIPPER_HOST_ID): these then run as regular activities on that host's
 * queue (a local activity would run wherever the workflow task ran, on
 * any host), and wait there for the host's next worker if none is up.
 * Unpinned runs (one host) keep `unpinned`, as before.
 */
export function onHost(host: string | undefined, unpinned: Activities, options: ActivityOptions): Activities {
  if (!host) return unpinned;
  return proxyActivities<Activities>({ ...options, taskQueue: hostQueue(workflowInfo().taskQueue, host) });
}

/**
 * For a step a tool call waits on: given up if no worker of the host takes
 * it within 10 s (the host is down), so the call answers `unavailable`
 * instead of hanging until its deadline.
 */
export const CALL_STEP: ActivityOptions = {
  scheduleToStartTimeout: '10s',
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 5, initialInterval: '200ms' },
};

const unpinnedSteps = proxyActivities<Activities>(CALL_STEP);

/**
 * The activities for a step a tool call waits on (CALL_STEP), on the run's
 * host. Always regular activities: an Update that awaits a local one can
 * complete in a later workflow task live than in replay (docs/decisions.md,
 * "An Update awaits no local activity").
 */
export function callSteps(host: string | undefined): Activities {
  return onHost(host, unpinnedSteps, CALL_STEP);
}
