import { CancellationScope, condition, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { failureText } from '../errors';
import { onHost } from '../host';
import { newId, type AgentState } from './state';

const ioOptions = { startToCloseTimeout: '60s', heartbeatTimeout: '20s', retry: { maximumAttempts: 3 } } as const;
const io = proxyActivities<Activities>(ioOptions);

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
        bytes = await onHost(s.id.host, io, ioOptions).workspaceBytes({ path: team.workspace_path, stopAbove: budget });
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
 * The same watch for agents started since `workspace-watch-long`: one
 * activity measures every few seconds and returns only when a team is over
 * budget (or after an hour), so an idle leader's history stays still. A new
 * team, or the leader's end, cancels the running watch. Failures are
 * recorded and backed off as above.
 */
export async function watchWorkspacesLong(s: AgentState): Promise<void> {
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
