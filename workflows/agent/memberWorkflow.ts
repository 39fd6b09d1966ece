import type { agentWorkflow } from './workflow';

/**
 * The agent workflow, which spawn.ts starts each member as. workflow.ts hands it in as it loads, so that spawn.ts
 * need not import workflow.ts, which reaches spawn.ts through handlers.ts and leaderHandlers.ts (workflows/ has no
 * import cycles, issue 40). It is read only while a workflow runs, by when every workflow module has loaded.
 */
let member: typeof agentWorkflow | undefined;

export function setMemberWorkflow(workflow: typeof agentWorkflow): void {
  member = workflow;
}

export function memberWorkflow(): typeof agentWorkflow {
  if (!member) throw new Error('workflows/agent/workflow.ts has not loaded');
  return member;
}
