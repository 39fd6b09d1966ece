import { setHandler } from '@temporalio/workflow';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import * as m from './messages';
import type { RunState } from './state';

/** Every message the run takes, each handed to its one method of RunState. */
export function installHandlers(s: RunState): void {
  setHandler(m.peerChangedSignal, (change) => s.dir.apply(change));
  setHandler(m.peersChangedSignal, ({ changes }) => changes.forEach((change) => s.dir.apply(change)));
  setHandler(m.rootReportSignal, (report) => s.rootReported(report));
  setHandler(m.rootAnsweredSignal, (answer) => s.rootAnswered(answer));
  setHandler(m.systemQuestionSignal, (ask) => s.systemQuestion(ask));
  setHandler(m.questionOpenedSignal, (q) => s.questionOpened(q));
  setHandler(m.questionClosedSignal, (q) => s.questionClosed(q));
  setHandler(m.approvalOpenedSignal, (a) => s.approvalOpened(a));
  setHandler(m.approvalClosedSignal, (a) => s.approvalClosed(a));
  setHandler(m.releaseSpawnsSignal, (r) => s.releaseSpawns(r));
  setHandler(wakeSignal, () => undefined);

  setHandler(m.rootDecisionUpdate, (decision) => s.decideByOperator(decision), { validator: (decision) => s.checkDecision(decision) });
  setHandler(m.reserveSpawnsUpdate, (request) => s.reserve(request), { validator: (request) => s.checkReservation(request) });
  setHandler(m.cancelRunUpdate, (cancel) => s.cancel(cancel));
  setHandler(m.openQuestionUpdate, (q) => s.openQuestion(q), { validator: (q) => s.checkOpenQuestion(q) });

  setHandler(m.peersQuery, (args) => s.peers(args), {
    description: "The run's directory as list_peers sees it: { caller_id?: agent (the root), scope?: team | children | all (all) }.",
  });
  setHandler(m.openQuestionsQuery, (args) => s.openQuestions(args), { description: 'Open questions of the run, and its limit: { qid?: one to look for }.' });
  setHandler(m.agentsQuery, () => s.agents(), { description: "Every agent's directory entry, with its leader and depth: the run's agent tree." });
  setHandler(m.peerQuery, (args) => s.peer(args), { description: "One agent's directory entry: { agent_id?: (the root) }." });
  setHandler(m.runQuery, () => s.view(), { description: "The run: status, task, root, agent count, the root's decisions waiting for a person, deadline, host." });
}
