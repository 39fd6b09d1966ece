import { assignmentMessage } from '../src/common/pure/content';
import type { AgentIdentity } from '../src/common/launchPayload';
import { isAlreadyStarted, isNotFound, type Temporal } from '../src/temporal';
import { agentWorkflowId, runWorkflowId } from '../workflows/ids';
import { peersChangedSignal } from '../workflows/run/messages';
import { memberAttributes } from '../workflows/searchAttributes';
import { agentSummary } from '../workflows/summaries';
import type { MembersStarted, MembersToStart, MemberToStart } from '../workflows/types';
import { agentWorkflow } from '../workflows/agent/workflow';

/** One signal carries at most this many directory changes (its payload stays small). */
const CHANGES_PER_SIGNAL = 60;
/** Starts in flight at once: enough to keep the server busy, few enough not to queue behind each other. */
const STARTS_AT_ONCE = 20;

/**
 * Registers the members with the run's directory and starts their
 * workflows, both at once: a member reports nothing before its spawn call
 * has returned, so the directory has its entry before any report. Each
 * start may run again (an attempt lost with its worker): a member already
 * started, or already ended, counts as started. A member the server
 * refuses leaves the directory again; the leader takes the rest back if it
 * must. `refusedAfter` is the memberStart test fault: members past it in
 * their team are started under the run's own workflow id, which the server
 * refuses for real.
 */
export async function startMembers(
  deps: { temporal: Temporal },
  runId: string,
  ask: MembersToStart,
  folders: { workspacePath: string; artifactsPath?: string },
  refusedAfter: number | undefined,
): Promise<MembersStarted> {
  const run = deps.temporal.handle(runWorkflowId(runId));
  const changes = [...ask.before, ...ask.members.map((m) => ({ agent_id: m.identity.agentId, entry: m.entry }))];
  const register = (async () => {
    try {
      await Promise.all(chunks(changes, CHANGES_PER_SIGNAL).map((part) => run.signal(peersChangedSignal, { changes: part })));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  })();
  const faulty = (i: number) => refusedAfter !== undefined && ask.teamSizeBefore + i >= refusedAfter;
  const starts = inBatches(ask.members, STARTS_AT_ONCE, (m, i) => start(deps.temporal, ask, m, folders, faulty(i) ? runWorkflowId(runId) : undefined));
  // Together: a registration that fails fails the attempt at once (and is never a rejection nobody awaits).
  const [registered, outcomes] = await Promise.all([register, starts]);
  const refused = ask.members.filter((_, i) => !outcomes[i]).map((m) => m.identity.agentId);
  if (refused.length > 0 && registered) {
    await run.signal(peersChangedSignal, { changes: refused.map((agent_id) => ({ agent_id, remove: true as const })) });
  }
  return { refused, registered };
}

/** Starts one member; false when the server refused it (only the test fault's id is ever refused). */
async function start(temporal: Temporal, ask: MembersToStart, m: MemberToStart, folders: { workspacePath: string; artifactsPath?: string }, faultId?: string): Promise<boolean> {
  const { artifactsPath } = folders;
  const planTaskId = m.identity.planTaskId;
  const identity: AgentIdentity = { ...m.identity, workspacePath: folders.workspacePath, ...(planTaskId && artifactsPath ? { artifactsPath } : {}) };
  const task = m.task ?? ask.runTask;
  const firstMessage = planTaskId && artifactsPath ? assignmentMessage(planTaskId, artifactsPath, task) : task;
  try {
    await temporal.start(agentWorkflow, {
      workflowId: faultId ?? agentWorkflowId(identity.runId, identity.agentId),
      taskQueue: ask.taskQueue,
      workflowTaskTimeout: ask.taskTimeoutMs,
      // Started again after a lost attempt, the member already running (or already ended) is the one this spawn made.
      workflowIdConflictPolicy: faultId ? 'FAIL' : 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [{ identity, limits: ask.limits, runTask: ask.runTask, launch: { firstMessage, roleDescription: m.roleDescription, rules: m.rules } }],
      // Read in the Temporal UI.
      ...agentSummary(identity, task),
      typedSearchAttributes: memberAttributes({ ...identity, leaderId: identity.leaderId! }),
    });
    return true;
  } catch (err) {
    if (!isAlreadyStarted(err)) throw err;
    return !faultId;
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

/** fn over every item, at most `width` at a time, results in the items' order. */
async function inBatches<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}
