import { Context, sleep } from '@temporalio/activity';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Outside an activity (a unit test calling one directly) there is no one to tell. */
function beat(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // not running as an activity
  }
}

/** Bytes of regular files under `dir`, stopping once past `stopAbove`; heartbeats as it walks. */
export async function measureWorkspace(dir: string, stopAbove = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  let seen = 0;
  const walk = async (at: string): Promise<void> => {
    const entries = await fs.readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (total > stopAbove) return;
      if (++seen % 500 === 0) beat();
      const full = path.join(at, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) total += (await fs.stat(full).catch(() => ({ size: 0 }))).size;
    }
  };
  await walk(dir);
  return total;
}

export interface WatchInput {
  teams: { team_id: string; path: string }[];
  budget: number;
  everyMs: number;
  /** Returns with nothing found after this long, so a workflow's history shows the watch about once an hour. */
  forMs: number;
}

/**
 * Measures the teams' workspaces every `everyMs` inside one activity and
 * returns the ones past the budget, or nothing once `forMs` has passed.
 * An idle leader's history then holds one activity per `forMs` instead of
 * an activity and a timer per check. Cancelled (through its heartbeat) when
 * the leader's teams change or it ends.
 */
export async function watchUntilOver(input: WatchInput): Promise<{ team_id: string; bytes: number }[]> {
  const until = Date.now() + input.forMs;
  for (;;) {
    const over: { team_id: string; bytes: number }[] = [];
    for (const team of input.teams) {
      const bytes = await measureWorkspace(team.path, input.budget);
      if (bytes > input.budget) over.push({ team_id: team.team_id, bytes });
    }
    if (over.length > 0 || Date.now() >= until) return over;
    // Heartbeat while waiting: it keeps the activity alive and brings its cancellation.
    for (let waited = 0; waited < input.everyMs; waited += 5000) {
      beat();
      await sleep(Math.min(5000, input.everyMs - waited));
    }
  }
}
