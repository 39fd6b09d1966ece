import { condition, proxyActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { INLINE_TEXT_BYTES, textBytes, type Text } from '../content';
import { askingSignal, systemMessageSignal } from '../agent/messages';
import { refuse } from '../errors';
import { EventBuffer } from '../events';
import { agentWorkflowId, runWorkflowId } from '../ids';
import { wakeSignal } from '../interceptors';
import { questionClosedSignal, questionOpenedSignal } from '../run/messages';
import { statusKey } from '../searchAttributes';
import { tell } from '../signals';
import { answerProblem, answerText, inboxQuestion, toAnswer, type Answer } from './answers';
import * as m from './messages';
import { deliverSystemAnswer } from './system';

/**
 * One ask_user question, from asking to answer. It lands in the holder's
 * inbox (first the asker's leader); the holder answers it or passes it one
 * hop up; past the root it waits for the human gateway. The answer goes
 * only to the asker, whose ask_user call reads it here. Once over, it
 * stays open a while so the asker's identical call, re-issued after its
 * client gave up, gets the same answer; then it closes.
 */
/** Retried until the content store takes it: the question must reach its holder. */
const store = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { initialInterval: '500ms', maximumInterval: '10s' } });

export async function questionWorkflow(input: m.QuestionInput): Promise<void> {
  const { runId, qid } = input;
  const events = new EventBuffer(runId, null);
  // Someone waits on each of its few writes (a holder's long poll, the asker's call): no gathering window.
  void events.flushForever(false);
  const waiters = `${runId}/${qid}`;

  let status: m.QuestionStatus = 'pending';
  const chain: string[] = [];
  let answers: Answer[] | null = null;
  let answeredBy: m.QuestionView['answered_by'] = null;
  let declined: m.QuestionView['declined'] = null;

  const holder = () => (status === 'pending' ? (chain.at(-1) ?? null) : null);
  const label = (who: m.Actor) => who.agent_id ?? (who.operator ? `operator ${who.operator}` : 'unknown');
  const end = (next: m.QuestionStatus) => {
    status = next;
    // The asker's ask_user call is waiting on this key.
    events.wake(waiters);
  };

  /** Gives the question to its next holder: an agent's inbox, or the human gateway past the root. */
  const route = async (to: string, reason: string | null) => {
    chain.push(to);
    setCurrentDetails(to === m.USER ? 'Waiting for a person at the human gateway.' : `Waiting for ${to} to answer or escalate it.`);
    upsertSearchAttributes([{ key: statusKey, value: to === m.USER ? 'awaiting_user' : 'awaiting_agent' }]);
    if (to === m.USER) {
      events.emit('question_routed', { qid, holder: m.USER, reason }, input.askerId);
      if (!input.humanGateway) end('unavailable');
      return;
    }
    events.emit('question_routed', { qid, holder: to, reason }, input.askerId);
    const words = inboxQuestion({ qid, askerId: input.askerId, askerRole: input.askerRole, questions: input.questions, context: typeof input.context === 'string' ? input.context : null, via: chain.slice(0, -1).filter((h) => h !== m.USER) });
    // A long question goes into the holder's inbox as a reference, as a long message does: a leader asked many
    // long questions would otherwise carry them all in its workflow state, past Temporal's payload limits.
    let content: Text = words;
    if (textBytes(words) > INLINE_TEXT_BYTES) [content] = await store.keepTexts({ runId, texts: [words] });
    await tell(agentWorkflowId(runId, to), systemMessageSignal, { message_id: `${qid}-${chain.length}`, content });
    // The holder's long poll hears of it from this write, not after the holder's own gathering window.
    events.wake(`${runId}/${to}`);
  };
  const nextAfter = (current: string): string => {
    const at = input.ancestors.indexOf(current);
    return at >= 0 && at + 1 < input.ancestors.length ? input.ancestors[at + 1] : m.USER;
  };

  setHandler(m.questionQuery, () => ({
    qid,
    run_id: runId,
    asker_id: input.askerId,
    asker_role: input.askerRole,
    status,
    holder: holder(),
    chain: [...chain],
    questions: input.questions,
    context: input.context,
    system: input.system ?? null,
    asked_at: workflowInfo().startTime.getTime(),
    answers,
    answer_text: answers ? answerText(input.questions, answers) : null,
    answered_by: answeredBy,
    declined,
  }), { description: 'The question: its sub-questions, who holds it, the chain so far, and its answer once there is one.' });

  /** The caller holds the question, or is told why not: unknown_qid once it is over, not_holder otherwise. */
  const checkHolder = (by: m.Actor, overCode: string) => {
    if (status !== 'pending') throw refuse(overCode, overCode === 'stale' ? `Question ${qid} is no longer pending.` : `No pending question ${qid}.`, { field: 'qid' });
    const current = holder();
    const mine = by.operator !== undefined ? current === m.USER : by.agent_id === current;
    if (mine) return;
    // A holder it was passed on from lost a race with its own escalation (or another hop's): the question moved on.
    if (overCode === 'stale' && by.agent_id !== undefined && chain.includes(by.agent_id)) {
      throw refuse('stale', `Question ${qid} was escalated past you; it is no longer yours to act on.`, { field: 'qid' });
    }
    throw refuse('not_holder', `You do not hold question ${qid}; only its current holder may act on it.`, { field: 'qid' });
  };

  setHandler(
    m.answerQuestionUpdate,
    ({ by, answers: given, reason }) => {
      answers = given.map((a, i) => toAnswer(input.questions[i], a));
      answeredBy = { ...by, reason };
      events.emit('question_answered', { qid, by: label(by), reason, hops: chain.length }, input.askerId);
      end('answered');
      return { ok: true as const, qid };
    },
    {
      validator: ({ by, answers: given }) => {
        checkHolder(by, 'unknown_qid');
        if (given.length !== input.questions.length) {
          throw refuse('answer_count_mismatch', `Question ${qid} has ${input.questions.length} sub-question(s); ${given.length} answer(s) given.`, {
            field: 'answers',
            expected: input.questions.length,
          });
        }
        for (const [i, a] of given.entries()) {
          const problem = answerProblem(input.questions[i], a, i);
          if (problem) throw refuse('invalid_input', problem.message, { field: problem.field });
        }
      },
    },
  );

  setHandler(
    m.escalateQuestionUpdate,
    async ({ by, reason }) => {
      const next = nextAfter(holder()!);
      events.emit('question_escalated', { qid, by: label(by), to: next, reason }, input.askerId);
      await route(next, reason);
      return { ok: true as const, qid, new_holder: next === m.USER ? null : next };
    },
    { validator: ({ by }) => checkHolder(by, 'stale') },
  );

  setHandler(
    m.declineQuestionUpdate,
    ({ operator, reason }) => {
      declined = { operator, reason };
      events.emit('question_declined', { qid, by: `operator ${operator}`, reason }, input.askerId);
      end('declined');
      return { ok: true as const, qid };
    },
    {
      validator: ({ operator }) => {
        checkHolder({ operator }, 'unknown_qid');
        // The root waits on the verdict; declining would leave it waiting with nobody asked.
        if (input.system?.kind === 'root_review' || input.system?.kind === 'root_termination') {
          throw refuse('invalid_input', 'A root review is answered Approve or Rework; it cannot be declined.', { field: 'reason' });
        }
      },
    },
  );

  let runEnded = false;
  setHandler(m.questionRunEndedSignal, () => {
    runEnded = true;
    if (status === 'pending') end('cancelled');
  });
  setHandler(m.questionWithdrawnSignal, ({ reason }) => {
    if (status !== 'pending') return;
    events.emit('question_withdrawn', { qid, reason }, input.askerId);
    end('cancelled');
  });
  setHandler(wakeSignal, () => undefined);

  // The asker's watchdog does not count it idle while it waits on its own question (workflows/agent/watchdog.ts).
  const asker = input.system ? null : agentWorkflowId(runId, input.askerId);
  // The asker and the run are told together, one round trip before the question moves.
  const askerTold = asker !== null ? tell(asker, askingSignal, { qid, open: true }) : undefined;
  events.emit('question_asked', { qid, questions: input.questions.length, to_user: input.toUser === true }, input.askerId);
  // The run ends its open questions with it; a question whose run has already ended is over at once.
  const runTold = tell(runWorkflowId(runId), questionOpenedSignal, { qid });
  await askerTold;
  if (!(await runTold)) end('cancelled');
  else await route(input.toUser || input.ancestors.length === 0 ? m.USER : input.ancestors[0], null);

  await condition(() => status !== 'pending');
  // Handlers changed it: read it afresh (the compiler would keep 'pending' from before the wait).
  const over = status as m.QuestionStatus;
  setCurrentDetails(`Over: ${over}.`);
  upsertSearchAttributes([{ key: statusKey, value: over }]);
  // Open a while for a re-issued call, unless the run ends first (an ended run leaves nothing running).
  if (asker !== null) await tell(asker, askingSignal, { qid, open: false });
  if (input.system && (over === 'answered' || over === 'declined')) {
    // Set by handlers: read afresh, as `over` is.
    const by = answeredBy as m.QuestionView['answered_by'];
    const refusal = declined as m.QuestionView['declined'];
    await deliverSystemAnswer(runId, qid, input.system, { answers, operator: by?.operator ?? null, declined: refusal?.reason ?? null });
  }
  if (over === 'answered' || over === 'declined') await condition(() => runEnded, input.reattachMs);
  await tell(runWorkflowId(runId), questionClosedSignal, { qid });
  await events.drain();
}
