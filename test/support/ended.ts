import type { Client } from '@temporalio/client';
import fs from 'node:fs';
import path from 'node:path';
import { isRunning } from '../../src/devstack/processes';
import { eventually } from './clients';

/**
 * What a run left running: its open workflows (by Temporal's visibility
 * API; a closed workflow has no timers either) and its agents' live runtime
 * processes (their pid files under the data folder). Empty once it ended.
 * Later surfaces' tests reuse this to prove an ended run leaves nothing.
 */
export async function leftRunning(client: Client, dataDir: string, runId: string): Promise<string[]> {
  const open: string[] = [];
  for await (const wf of client.workflow.list({ query: `DipperRunId = '${runId}' AND ExecutionStatus = 'Running'` })) open.push(`workflow ${wf.workflowId}`);
  const agents = path.join(dataDir, 'runs', runId, 'agents');
  for (const agent of fs.existsSync(agents) ? fs.readdirSync(agents) : []) {
    const pidFile = path.join(agents, agent, 'runtime.pid');
    if (!fs.existsSync(pidFile)) continue;
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split(' ')[0]);
    if (isRunning(pid)) open.push(`process ${pid} (agent ${agent})`);
  }
  return open;
}

/** Waits until the run has left nothing running; fails naming what is still there. */
export async function untilNothingRunning(client: Client, dataDir: string, runId: string, timeoutMs = 30_000): Promise<void> {
  let last: string[] = [];
  try {
    await eventually(async () => {
      last = await leftRunning(client, dataDir, runId);
      return last.length === 0 ? true : undefined;
    }, timeoutMs);
  } catch {
    throw new Error(`run ${runId} left running: ${last.join(', ')}`);
  }
}
