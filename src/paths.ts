import path from 'node:path';

/**
 * Plan task ids are chosen by agents and become a folder name
 * (`<team>/artifacts/<task id>`, the spec's artifacts_path), so they are
 * checked where they enter: a letter or digit, then letters, digits, '.',
 * '_' or '-', 64 characters at most, never "..". The spec's examples (t1,
 * t2) fit; percent-encoding is not needed, so the folder is the id itself.
 */
export const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isTaskId(id: string): boolean {
  return TASK_ID.test(id) && !id.includes('..');
}

/** A path segment that is not one of Dipper's own id shapes: a bug or a forged input, never a folder. */
export class UnsafePathSegment extends Error {
  constructor() {
    super('unsafe path segment');
  }
}

/** Where a run's files live under the data folder; one place so every process agrees. */
export const paths = {
  events: (dataDir: string) => path.join(dataDir, 'events.db'),
  content: (dataDir: string) => path.join(dataDir, 'content.db'),
  audit: (dataDir: string) => path.join(dataDir, 'audit.db'),
  run: (dataDir: string, runId: string) => path.join(dataDir, 'runs', safe(runId)),
  runWorkspace: (dataDir: string, runId: string) => path.join(paths.run(dataDir, runId), 'workspace'),
  teamWorkspace: (dataDir: string, runId: string, teamId: string) =>
    path.join(paths.run(dataDir, runId), 'teams', safe(teamId)),
  artifacts: (teamWorkspace: string, taskId: string) => {
    if (!isTaskId(taskId)) throw new UnsafePathSegment();
    return path.join(teamWorkspace, 'artifacts', taskId);
  },
  plan: (dataDir: string, runId: string, agentId: string, planId: string) =>
    path.join(paths.run(dataDir, runId), 'plans', safe(agentId), `${safe(planId)}.json`),
  agentRuntime: (dataDir: string, runId: string, agentId: string) =>
    path.join(paths.run(dataDir, runId), 'agents', safe(agentId)),
  /** HOME of an agent that runs as another user (its runtime folder above is the worker's alone). */
  agentHome: (dataDir: string, runId: string, agentId: string) => path.join(paths.run(dataDir, runId), 'homes', safe(agentId)),
};

/**
 * Run, agent, team and plan ids are minted by Dipper (`run_…`, `ag_…`,
 * `tm_…`, `pl_…`), so a segment of another shape is a bug or a forged input:
 * refused, never cleaned up into some other folder.
 */
function safe(segment: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(segment) || segment.includes('..')) throw new UnsafePathSegment();
  return segment;
}
