/**
 * Workflow IDs are built from domain IDs so a person can find a run, or one
 * agent of it, in the Temporal UI and CLI by prefix.
 */
export function runWorkflowId(runId: string): string {
  return `run/${runId}`;
}

export function agentWorkflowId(runId: string, agentId: string): string {
  return `run/${runId}/agent/${agentId}`;
}

/** A question of the run (ask_user), found in the Temporal UI beside its run's agents. */
export function questionWorkflowId(runId: string, qid: string): string {
  return `run/${runId}/question/${qid}`;
}

/** The queue only one host's workers poll (beside the shared one): a pinned run's files and processes are reached there. */
export function hostQueue(queue: string, host: string): string {
  return `${queue}@${host}`;
}

/** A qid as Dipper makes them (`q_` and a digest); anything else cannot name a question. */
export function isQid(qid: string): boolean {
  return /^q_[A-Za-z0-9_-]{1,64}$/.test(qid);
}

/** An iSphere send's approval (workflows/isphere), beside its run's agents and questions. */
export function approvalWorkflowId(runId: string, approvalId: string): string {
  return `run/${runId}/approval/${approvalId}`;
}

/** An agent's name: its role, made safe for a path and a process title, and a piece of its id. */
export function agentName(role: string, agentId: string): string {
  return `${slug(role)}-${agentId.slice(3, 7)}`;
}

function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return s || 'agent';
}

/**
 * The wake-feed keys a spawn's step announces on, after its run id (`<run>/<key>`): its member runs, or the leader's
 * answer is the caller's (refused, failed, or the run closed). `key` is the spawn's Update id.
 */
export const spawnWakes = (key: string) => ({ started: `spawned/${key}`, failed: `spawn-failed/${key}` });
