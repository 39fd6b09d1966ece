import { setHandler } from '@temporalio/workflow';
import { setUpdateOnce } from '../receipts';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import { budgetSpent, restart, runtimeGone } from './crash';
import type { Leader } from './leader';
import * as m from './messages';
import type { AgentState } from './state';
import { setAsking } from './watchdog';

/**
 * Every message an agent takes, each handed to its one method: of the
 * agent itself (AgentState: its inbox, its reports, its lifecycle) or of
 * the agent as a leader (Leader: its plan, teams and children). A check*
 * method is the validator and changes nothing. Updates that must not apply
 * twice across continue-as-new go through their receipts (setUpdateOnce).
 */
export function installHandlers(s: AgentState, lead: Leader): void {
  // Its inbox
  setHandler(m.deliverMessagesUpdate, ({ messages }) => s.deliverAll(messages), { validator: ({ messages }) => s.checkDeliveries(messages) });
  setHandler(m.ackInboxUpdate, ({ up_to }) => s.ack(up_to), { validator: ({ up_to }) => s.checkAck(up_to) });
  setHandler(m.inboxQuery, (args) => s.inboxView(args?.after ?? 0, args?.limit ?? 100), {
    description: 'Unacknowledged inbox items after a cursor: { after?: seq (0), limit?: n (100) }.',
  });
  setHandler(m.launchQuery, () => s.launchView(), { description: "What this agent's runtime is launched with (no token), and its launch generation." });
  setHandler(m.systemMessageSignal, (words) => void s.systemMessage(words));
  setHandler(m.systemMessageUpdate, (words) => s.systemMessage(words));

  // Its reports, and its end
  setUpdateOnce(s.receipts, m.signalReviewUpdate, ({ detail }) => s.signalReview(detail), { validator: ({ detail }) => s.checkSignalReview(detail) });
  setUpdateOnce(s.receipts, m.requestTerminationUpdate, ({ detail }) => s.requestTermination(detail), { validator: (_input) => s.checkRequestTermination() });
  setHandler(m.terminateSignal, ({ force }) => void s.postTerminate(force));
  // Runs recorded before the signal named its kind cleared both flags.
  setHandler(m.humanAnsweredSignal, (answer) => void s.clearByLeader(null, answer?.kind));
  setHandler(m.runEndedSignal, () => s.runEnded());
  setHandler(m.leaderEndedSignal, () => s.leaderEnded());

  // Its runtime, and the watchdog's signs of life (workflows/agent/watchdog.ts)
  setHandler(m.runtimeExitedSignal, (exit) => runtimeGone(s, exit));
  setHandler(m.budgetSpentSignal, (spent) => budgetSpent(s, spent));
  setHandler(m.restartSignal, (words) => restart(s, words));
  setHandler(m.activitySignal, () => s.driven());
  setHandler(m.askingSignal, ({ qid, open }) => setAsking(s, qid, open));
  // Its workflow task is the point (workflows/interceptors.ts); there is nothing to do.
  setHandler(wakeSignal, () => undefined);

  // As a leader
  setHandler(m.childChangedSignal, (change) => lead.childChanged(change));
  setUpdateOnce(s.receipts, m.declarePlanUpdate, ({ tasks }) => lead.declarePlan(tasks), { validator: ({ tasks }) => lead.checkDeclarePlan(tasks) });
  setUpdateOnce(s.receipts, m.removePlanUpdate, () => lead.removePlan(), { validator: () => lead.checkRemovePlan() });
  setUpdateOnce(s.receipts, m.spawnAgentUpdate, ({ task_id }) => lead.spawn(task_id), { validator: ({ task_id }) => lead.checkSpawnCall(task_id) });
  setHandler(m.spawnStartedSignal, ({ key, made }) => lead.spawnStarted(key, made));
  setHandler(m.spawnOutcomeUpdate, ({ agent_id }) => lead.spawnOutcome(agent_id));
  setHandler(m.createTeamUpdate, (input) => lead.createTeam(input), { validator: (input) => lead.checkCreateTeam(input) });
  setUpdateOnce(s.receipts, m.terminateChildUpdate, ({ agent_id, force }) => lead.terminateChild(agent_id, force), {
    validator: ({ agent_id, force }) => lead.checkTerminateChild(agent_id, force),
  });
  setUpdateOnce(s.receipts, m.updatePlanTaskUpdate, (input) => lead.updatePlanTask(input), { validator: (input) => lead.checkUpdatePlanTask(input) });
  setHandler(m.listReadyQuery, () => lead.ready(), { description: 'Plan tasks ready to spawn (null without a plan).' });
  setHandler(m.pendingReviewsQuery, (args) => lead.pendingReviews(args?.now ?? Date.now()), {
    description: "This leader's children waiting for its review, oldest first: { now?: ms (workflow time) } for their ages.",
  });
}
