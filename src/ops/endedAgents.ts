import { agentWorkflow } from '../../workflows';
import { typeIs, type Temporal, type WorkflowSummary } from '../temporal';

export interface EndedAgent {
  workflowId: string;
  runId: string;
  /** Dipper's run and agent ids, from the workflow's search attributes. */
  dipperRunId: string | undefined;
  agentId: string | undefined;
  /** Who closed it and why: "terminated by <identity>: <reason>", or "timed out". */
  message: string;
}

const keyword = (wf: WorkflowSummary, name: string): string | undefined => {
  const value = wf.searchAttributes?.[name];
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
};

/** The DipperRunId of a workflow, from visibility. */
export const runIdOf = (wf: WorkflowSummary): string | undefined => keyword(wf, 'DipperRunId');

/**
 * Agents whose workflow the server closed: terminated (a workflow task completion over the server's size limits ends
 * so: GrpcMessageTooLarge) or timed out. Nothing of Dipper's hears of it, so the run's directory still shows the agent
 * as it was. `scope` narrows the visibility query (` AND DipperRunId = "…"`). The closed run of a reset (the doctor's
 * repair terminates it) is not one: its workflow id has a newer run. Usually there are none, and this
 * is one visibility call.
 */
export async function endedAgents(temporal: Temporal, scope: string): Promise<EndedAgent[]> {
  const out: EndedAgent[] = [];
  for await (const wf of temporal.list(`${typeIs(agentWorkflow)} AND (ExecutionStatus = "Terminated" OR ExecutionStatus = "TimedOut")${scope}`)) {
    const latest = await temporal.handle(wf.workflowId).describe();
    if (latest.runId !== wf.runId) continue;
    const last = (await temporal.handle(wf.workflowId, wf.runId).fetchHistory()).events?.at(-1);
    const terminated = last?.workflowExecutionTerminatedEventAttributes;
    const message = terminated ? `terminated by ${terminated.identity || 'the server'}: ${terminated.reason || 'no reason given'}` : 'timed out';
    out.push({ workflowId: wf.workflowId, runId: wf.runId, dipperRunId: runIdOf(wf), agentId: keyword(wf, 'DipperAgentId'), message });
  }
  return out;
}
