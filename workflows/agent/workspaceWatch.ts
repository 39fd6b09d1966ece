import { condition, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { newId, type AgentState } from './state';

const io = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

/**
 * A leader measures its teams' workspaces every few seconds of workflow
 * time and is told, once per team, when one grows past its budget
 * (workspace_over_budget and a system message in its own inbox).
 */
export async function watchWorkspaces(s: AgentState): Promise<void> {
  const budget = s.limits.workspaceBudgetBytes ?? 500 * 1024 * 1024;
  const every = (s.limits.workspaceCheckSeconds ?? 60) * 1000;
  for (;;) {
    await condition(() => s.data.teams.length > 0 || s.status === 'terminated');
    if (s.status === 'terminated') return;
    await sleep(every);
    const flagged = (s.data.over_budget ??= []);
    for (const team of s.data.teams.filter((t) => !flagged.includes(t.team_id))) {
      const bytes = await io.workspaceBytes({ path: team.workspace_path });
      if (bytes <= budget) continue;
      flagged.push(team.team_id);
      s.events.emit('workspace_over_budget', { team_id: team.team_id, bytes, budget });
      const text = `[WORKSPACE OVER BUDGET] Team ${team.team_id} uses ${bytes} bytes of its ${budget}-byte budget. Clean up or ask your members to.`;
      s.inbox.push('system', null, text, newId('msg'), Date.now());
    }
  }
}
