import { runWorkflowId } from '../ids';
import { peerChangedSignal } from '../run/messages';
import { tell } from '../signals';
import type { AgentStatus } from '../types';
import type { AgentState } from './state';

/**
 * Read-your-writes: a call that changes the caller's status tells the run's
 * directory itself and waits for the signal to land before it answers, so
 * a list_peers sent after the answer (by anyone) sees the new status. The
 * main loop's report follows; the directory takes it as a repeat.
 */
export function statusToDirectory(s: AgentState, agentId = s.id.agentId, status: AgentStatus = s.status): Promise<boolean> {
  return tell(runWorkflowId(s.id.runId), peerChangedSignal, { agent_id: agentId, patch: { status } });
}
