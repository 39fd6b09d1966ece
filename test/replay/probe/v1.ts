import { sleep } from '@temporalio/workflow';

/** The code the probe histories are recorded with (replayAll.test.ts). */
export async function changedProbe(): Promise<string> {
  await sleep(1);
  return 'v1';
}

export async function steadyProbe(): Promise<string> {
  await sleep(1);
  return 'steady';
}

export async function goneProbe(): Promise<string> {
  await sleep(1);
  return 'gone';
}

/** A plain Error fails the workflow task, not the workflow: Temporal retries it for ever. */
export async function stuckProbe(): Promise<void> {
  throw new Error('stuck on purpose');
}
