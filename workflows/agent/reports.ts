import { agentWorkflowId, runWorkflowId } from '../ids';
import { peerChangedSignal } from '../run/messages';
import { tell } from '../signals';
import type { AgentStatus } from '../types';
import { excerpt, type Text } from '../../src/common/pure/content';
import { childChangedSignal, type ChildChange } from './messages';
import type { AgentState } from './state';

/**
 * What an agent tells the others of itself: the run's directory its status,
 * its leader its mirror (what the leader keeps of it).
 */

/**
 * Read-your-writes: a call that changes the caller's status tells the run's
 * directory itself and waits for the signal to land before it answers, so
 * a list_peers sent after the answer (by anyone) sees the new status. The
 * main loop's report follows; the directory takes it as a repeat.
 */
export function statusToDirectory(s: AgentState, agentId = s.id.agentId, status: AgentStatus = s.status): Promise<boolean> {
  return tell(runWorkflowId(s.id.runId), peerChangedSignal, { agent_id: agentId, patch: { status } });
}

/** Tells the leader's mirror and the run's directory about a status change. */
export async function notifyStatus(s: AgentState): Promise<void> {
  await statusToDirectory(s);
  if (!s.isRoot) await tellLeader(s, { patch: { status: s.status } });
}

/**
 * Tells the leader what changed. Two of these can be in flight at once (a
 * rework message's "review answered" and the child's next signal_review,
 * sent before the first landed), and Temporal may deliver them in either
 * order: the leader then kept "not pending" with the new report in its
 * inbox, and refused to approve it (seen in CI). So an agent sends its
 * whole mirror, numbered, and the leader keeps the newest.
 */
export async function tellLeader(s: AgentState, change: Omit<ChildChange, 'agent_id' | 'seq'>): Promise<void> {
  const seq = (s.data.told_leader = (s.data.told_leader ?? 0) + 1);
  await tell(agentWorkflowId(s.id.runId, s.id.leaderId!), childChangedSignal, { agent_id: s.id.agentId, ...change, patch: mirrorOf(s), seq });
}

/** Everything the leader mirrors of this agent, as it is now. */
function mirrorOf(s: AgentState): ChildChange['patch'] {
  return {
    status: s.status,
    review_pending: s.data.review.pending,
    review_pending_ts: s.data.review.ts,
    termination_requested: s.data.termination_requested,
    summary: summaryOf(s.data.last_status_detail),
  };
}

/** What the leader keeps of a report for list_pending_reviews; the full text is in its inbox. */
const SUMMARY_CHARS = 2000;
function summaryOf(detail: Text): Text {
  return excerpt(detail, SUMMARY_CHARS);
}
