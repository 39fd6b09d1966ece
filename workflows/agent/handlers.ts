import { setUpdateOnce } from '../appliedUpdates';
import type { ApplicationFailure } from '@temporalio/common';
import { setHandler, workflowInfo } from '@temporalio/workflow';
import { refuse } from '../errors';
import { agentWorkflowId, runWorkflowId } from '../ids';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import { tell } from '../signals';
import { peerChangedSignal, rootReportSignal } from '../run/messages';
import type { ChildChange } from './messages';
import * as m from './messages';
import { budgetSpent, restart, runtimeGone } from './crash';
import { healthOf } from './health';
import { installLeaderHandlers } from './leaderHandlers';
import { statusToDirectory } from './statusReport';
import { newId, type AgentState } from './state';
import { excerpt, prefixed, type Text } from '../../src/common/pure/content';

/** Tells the leader's mirror and the run's directory about a status change. */
export async function notifyStatus(s: AgentState): Promise<void> {
  const status = s.status;
  await tell(runWorkflowId(s.id.runId), peerChangedSignal, { agent_id: s.id.agentId, patch: { status } });
  if (!s.isRoot) await tellLeader(s, { patch: { status } });
}

/**
 * Tells the leader what changed. Two of these can be in flight at once (a
 * rework message's "review answered" and the child's next signal_review,
 * sent before the first landed), and Temporal may deliver them in either
 * order: the leader then kept "not pending" with the new report in its
 * inbox, and refused to approve it (seen in CI). So an agent sends its
 * whole mirror, numbered, and the leader keeps the newest.
 */
async function tellLeader(s: AgentState, change: Omit<ChildChange, 'agent_id' | 'seq'>): Promise<void> {
  const seq = (s.data.told_leader = (s.data.told_leader ?? 0) + 1);
  await tell(agentWorkflowId(s.id.runId, s.id.leaderId!), m.childChangedSignal, { agent_id: s.id.agentId, ...change, patch: mirrorOf(s), seq });
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

export function installHandlers(s: AgentState, runTask: Text): void {
  // Messaging and the runtime's inbox

  setHandler(
    m.deliverMessagesUpdate,
    async ({ messages }) => {
      let cleared = false;
      const outcomes = messages.map((msg): m.DeliveryOutcome => {
        try {
          s.checkDeliver(msg);
        } catch (err) {
          const failure = err as ApplicationFailure;
          const extra = (failure.details?.[0] ?? {}) as Record<string, unknown>;
          return { message_id: msg.message_id, delivered: false, code: failure.type ?? 'internal', message: failure.message, extra };
        }
        if (s.inbox.has(msg.message_id)) return { message_id: msg.message_id, delivered: true, reused: true };
        cleared = s.deliver(msg) || cleared;
        return { message_id: msg.message_id, delivered: true };
      });
      if (cleared && !s.isRoot) {
        // Awaited so the leader's own list_pending_reviews sees the cleared review once send_message returns.
        await tellLeader(s, { patch: { review_pending: false, review_pending_ts: null, termination_requested: false } });
      }
      return outcomes;
    },
    {
      validator: s.validated(({ messages }: { messages: m.DeliverInput[] }) => {
        if (messages.length === 0 || messages.length > m.MAX_DELIVERY_BATCH) {
          throw refuse('invalid_input', `A delivery carries 1 to ${m.MAX_DELIVERY_BATCH} messages.`, { field: 'messages' });
        }
      }),
    },
  );

  setHandler(m.ackInboxUpdate, ({ up_to }) => {
    const acked_through = s.ack(up_to);
    return s.status === 'terminated' ? { acked_through, terminated: true as const } : { acked_through };
  }, {
    validator: ({ up_to }) => {
      if (!Number.isInteger(up_to) || up_to < 0) throw refuse('invalid_input', 'up_to must be a sequence number.', { field: 'up_to' });
    },
  });

  setHandler(
    m.inboxQuery,
    (args) => ({
      items: s.inbox.after(args?.after ?? 0, args?.limit ?? 100),
      acked_through: s.data.inbox.acked_through,
      status: s.status,
      health: healthOf(s),
      plan: s.data.plan
        ? { plan_id: s.data.plan.plan_id, tasks: s.data.plan.tasks.map((t) => ({ id: t.id, role: t.role, status: t.status, agent_id: t.agent_id ?? null, depends_on: t.depends_on })) }
        : null,
    }),
    { description: 'Unacknowledged inbox items after a cursor: { after?: seq (0), limit?: n (100) }.' },
  );

  setHandler(m.launchQuery, () => ({
    identity: s.id,
    launch: s.data.launch_spec,
    // Before its first launch an agent is about to get generation 1.
    generation: Math.max(1, s.data.launch_gen ?? 0),
    issuedAt: s.data.launched_at ?? workflowInfo().startTime.getTime(),
    terminated: s.status === 'terminated',
  }), { description: "What this agent's runtime is launched with (no token), and its launch generation." });

  setHandler(m.systemMessageSignal, ({ message_id, content }) => {
    if (s.inbox.has(message_id)) return;
    s.inbox.push('system', null, content, message_id, Date.now());
  });

  // Reviews and termination, the child's side

  setUpdateOnce(
    s.applied,
    m.signalReviewUpdate,
    async ({ detail }) => {
      s.signalReview(detail);
      const directory = statusToDirectory(s);
      if (s.isRoot) {
        await tell(runWorkflowId(s.id.runId), rootReportSignal, {
          kind: 'review',
          detail,
          ts: Date.now(),
        });
      } else {
        await tellLeader(s, {
          patch: { review_pending: true, review_pending_ts: s.data.review.ts, summary: summaryOf(detail), status: s.status },
          inbox: { kind: 'review_report', content: detail, message_id: newId('msg') },
        });
      }
      await directory;
      return { recorded: true as const, review_pending: true as const, leader_id: s.id.leaderId };
    },
    { validator: s.validated(({ detail }: { detail: Text }) => s.checkSignalReview(detail)) },
  );

  setUpdateOnce(
    s.applied,
    m.requestTerminationUpdate,
    async ({ detail }: { detail?: Text }) => {
      s.requestTermination(detail);
      const directory = statusToDirectory(s);
      const text = detail ?? '(no detail given)';
      if (s.isRoot) {
        await tell(runWorkflowId(s.id.runId), rootReportSignal, {
          kind: 'termination',
          detail: text,
          ts: Date.now(),
        });
      } else {
        await tellLeader(s, {
          patch: { termination_requested: true, summary: summaryOf(s.data.last_status_detail), status: s.status },
          inbox: { kind: 'termination_request', content: prefixed('[TERMINATION REQUESTED] ', text), message_id: newId('msg') },
        });
      }
      await directory;
      return { recorded: true as const, termination_requested: true as const, leader_id: s.id.leaderId };
    },
    { validator: s.validated((_input: { detail?: Text }) => s.checkRequestTermination()) },
  );

  setHandler(m.terminateSignal, ({ force }) => {
    s.postTerminate(force);
  });

  setHandler(m.runtimeExitedSignal, (exit) => runtimeGone(s, exit));
  setHandler(m.budgetSpentSignal, (spent) => budgetSpent(s, spent));
  setHandler(m.restartSignal, (words) => restart(s, words));

  setHandler(m.runEndedSignal, () => {
    // Every agent's lifecycle ends with one agent_completed; here the run ended around it.
    s.complete({ stop_reason: s.data.termination_requested ? 'end_turn' : 'cancelled', run_ended: true });
    s.data.run_ended = true;
  });

  // Its workflow task is the point (workflows/interceptors.ts); there is nothing to do.
  setHandler(wakeSignal, () => undefined);

  setHandler(m.leaderEndedSignal, () => {
    if (s.status === 'terminated') return;
    s.data.leader_ended = true;
    s.events.emit('terminate.forced', { reason: 'leader_terminated' });
    s.complete({ stop_reason: 'cancelled', leader_terminated: true });
  });

  // Runs recorded before the signal named its kind cleared both flags.
  setHandler(m.humanAnsweredSignal, (answer) => {
    s.clearByLeader(null, answer?.kind);
  });

  installLeaderHandlers(s, runTask);
}
