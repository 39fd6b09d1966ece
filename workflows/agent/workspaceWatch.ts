import { CancellationScope, condition, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { failureText } from '../errors';
import { onHost } from '../host';
import { newId, type AgentState } from './state';

/** How long one watching activity runs before it returns empty-handed (an idle leader's history: a few events an hour). */
const WATCH_FOR_MS = 3600_000;
const watcherOptions = {
  startToCloseTimeout: WATCH_FOR_MS + 15 * 60_000,
  // Its heartbeats (every 5 s while it waits) keep it alive and bring cancellation; a dead worker's watch is retried soon.
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 3 },
} as const;
const watcher = proxyActivities<Activities>(watcherOptions);

/** After a round with a failed measurement the next waits longer, doubling up to this many checks' time. */
const MAX_BACKOFF = 16;

/** Flags a team past its budget: an event and a system message in the leader's own inbox, once per team. */
function flag(s: AgentState, teamId: string, bytes: number, budget: number): void {
  const flagged = (s.data.over_budget ??= []);
  if (flagged.includes(teamId)) return;
  flagged.push(teamId);
  s.events.emit('workspace_over_budget', { team_id: teamId, bytes, budget });
  const text = `[WORKSPACE OVER BUDGET] Team ${teamId} uses at least ${bytes} bytes of its ${budget}-byte budget. Clean up or ask your members to.`;
  s.inbox.push('system', null, text, newId('msg'), Date.now());
}

/**
 * A leader is told, once per team, when a team's workspace grows past its
 * budget (workspace_over_budget and a system message in its own inbox).
 * One activity measures every few seconds and returns only when a team is
 * over budget (or after an hour), so an idle leader's history stays still.
 * A new team, or the leader's end, cancels the running watch.
 *
 * This runs beside the main loop for the workflow's life, so nothing it
 * does may fail: a watch that fails every attempt is recorded
 * (`watchdog.exception`, as the notes say a watchdog failure is) and the
 * loop backs off and goes on. Uncaught, it would be an unhandled rejection,
 * which fails every workflow task of the agent from then on.
 */
export async function watchWorkspaces(s: AgentState): Promise<void> {
  const budget = s.limits.workspaceBudgetBytes ?? 500 * 1024 * 1024;
  const every = (s.limits.workspaceCheckSeconds ?? 60) * 1000;
  const open = () => s.data.teams.filter((t) => !(s.data.over_budget ?? []).includes(t.team_id));
  let backoff = 1;
  for (;;) {
    await condition(() => open().length > 0 || s.status === 'terminated');
    if (s.status === 'terminated') return;
    const teams = open();
    const scope = new CancellationScope();
    const watching = scope.run(() =>
      onHost(s.id.host, watcher, watcherOptions).watchWorkspaces({ teams: teams.map((t) => ({ team_id: t.team_id, path: t.workspace_path })), budget, everyMs: every, forMs: WATCH_FOR_MS }),
    );
    // Settled either way, so its rejection after a cancel is never unhandled.
    const outcome = watching.then(
      (over) => ({ over }),
      (err: unknown) => ({ err }),
    );
    const teamsBefore = s.data.teams.length;
    let done: { over: { team_id: string; bytes: number }[] } | { err: unknown } | undefined;
    void outcome.then((o) => (done = o));
    await condition(() => s.data.teams.length !== teamsBefore || s.status === 'terminated' || done !== undefined);
    if (done === undefined) {
      scope.cancel();
      await outcome;
      continue;
    }
    if ('err' in done) {
      if (!isCancellation(done.err)) {
        s.events.emit('watchdog.exception', { watcher: 'workspace_budget', team_ids: teams.map((t) => t.team_id), message: failureText(done.err) });
        backoff = Math.min(backoff * 2, MAX_BACKOFF);
        await sleep(every * backoff);
      }
      continue;
    }
    backoff = 1;
    for (const o of done.over) flag(s, o.team_id, o.bytes, budget);
  }
}
