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
