import { condition, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { failureText } from '../errors';
import { newId, type AgentState } from './state';

const io = proxyActivities<Activities>({ startToCloseTimeout: '60s', heartbeatTimeout: '20s', retry: { maximumAttempts: 3 } });

/** After a round with a failed measurement the next waits longer, doubling up to this many checks' time. */
const MAX_BACKOFF = 16;

/**
 * A leader measures its teams' workspaces every few seconds of workflow
 * time and is told, once per team, when one grows past its budget
 * (workspace_over_budget and a system message in its own inbox).
 *
 * This runs beside the main loop for the workflow's life, so nothing it
 * does may fail: a measurement that fails every attempt is recorded
 * (`watchdog.exception`, as the notes say a watchdog failure is) and the
 * loop backs off and goes on. Uncaught, it would be an unhandled rejection,
 * which fails every workflow task of the agent from then on.
 */
export async function watchWorkspaces(s: AgentState): Promise<void> {
  const budget = s.limits.workspaceBudgetBytes ?? 500 * 1024 * 1024;
  const every = (s.limits.workspaceCheckSeconds ?? 60) * 1000;
  let backoff = 1;
  for (;;) {
    await condition(() => s.data.teams.length > 0 || s.status === 'terminated');
    if (s.status === 'terminated') return;
    await sleep(every * backoff);
    let failed = false;
    const flagged = (s.data.over_budget ??= []);
    for (const team of s.data.teams.filter((t) => !flagged.includes(t.team_id))) {
      let bytes: number;
      try {
        bytes = await io.workspaceBytes({ path: team.workspace_path, stopAbove: budget });
      } catch (err) {
        failed = true;
        s.events.emit('watchdog.exception', { watcher: 'workspace_budget', team_id: team.team_id, message: failureText(err) });
        continue;
      }
      if (bytes <= budget) continue;
      flagged.push(team.team_id);
      s.events.emit('workspace_over_budget', { team_id: team.team_id, bytes, budget });
      const text = `[WORKSPACE OVER BUDGET] Team ${team.team_id} uses at least ${bytes} bytes of its ${budget}-byte budget. Clean up or ask your members to.`;
      s.inbox.push('system', null, text, newId('msg'), Date.now());
    }
    backoff = failed ? Math.min(backoff * 2, MAX_BACKOFF) : 1;
  }
}
