import type { Limits } from '../../config';

/**
 * How long a worker may hold a workflow task before the server hands it to
 * another attempt, named here so every workflow Dipper starts gets it and
 * hands it on to the children it starts. A worker killed holding a task
 * leaves its workflow waiting this long, the largest term of recovery; a
 * task that needs longer is taken again. A fresh worker replays every
 * history it gets on one thread, up to 800 events each (about 0.3 s on a
 * busy core): 3 s keeps the longest task seen in the crash soak's ten-seed
 * runs (1.9 s) inside it. At 4 s with 8,000-event histories a fresh worker
 * never caught up; Temporal's default is 10 s (docs/reliability.md).
 */
export const WORKFLOW_TASK_TIMEOUT_MS = 3_000;

/**
 * Dipper's default limits. Here, where workflow code imports them too,
 * because a run started before a limit existed falls back to its default
 * inside workflow code; src/config.ts reads the environment on top of them.
 */
export const defaultLimits: Limits = {
  maxDepth: 8,
  depthWarningAbove: 6,
  inboxCap: 1000,
  inboxBytes: 1024 * 1024,
  maxContentBytes: 256 * 1024,
  maxPlanTasks: 1000,
  terminateGraceSeconds: 60,
  // A fresh worker replays a history before its first task there; at 8,000 events an agent took over 10 s (the
  // task timeout) on a busy 2-core machine after a kill, and its tasks timed out for good (issue 20's matrix); at
  // 2,000 a fresh worker's first tasks still took up to 2.5 s, all its replays sharing one thread.
  continueAsNewEvents: 800,
  workspaceBudgetBytes: 500 * 1024 * 1024,
  workspaceCheckSeconds: 60,
  maxAgentsPerRun: 2000,
  maxChildrenPerLeader: 1000,
  maxConcurrentSpawns: 100,
  spawnsPerSecond: 20,
  spawnBurst: 100,
  maxOpenQuestions: 1000,
  reviewWatchdogSeconds: 60,
  idleWatchdogSeconds: 120,
};
