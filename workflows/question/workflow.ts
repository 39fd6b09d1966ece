import { condition, proxyActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { INLINE_TEXT_BYTES, textBytes, type Text } from '../../src/common/pure/content';
import { askingSignal, systemMessageSignal } from '../agent/messages';
import { EventBuffer } from '../events';
import { agentWorkflowId, runWorkflowId } from '../ids';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import { questionClosedSignal, questionOpenedSignal } from '../run/messages';
import { statusKey } from '../searchAttributes';
import { tell } from '../signals';
import { inboxQuestion } from './answers';
import { questionItemId } from './items';
import * as m from './messages';
import { QuestionState } from './state';
import { deliverSystemAnswer } from './system';
import { gist, tellPeople } from '../notify';
import type { Notice } from '../../src/notify/send';

/** Retried until the content store takes it: the question must reach its holder. */
const store = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { initialInterval: '500ms', maximumInterval: '10s' } });

/**
 * One ask_user question, from asking to answer. It lands in the holder's
 * inbox (first the asker's leader); the holder answers it or passes it one
 * hop up; past the root it waits for the human gateway. The answer goes
 * only to the asker, whose ask_user call reads it here. Once over, it
 * stays open a while so the asker's identical call, re-issued after its
 * client gave up, gets the same answer; then it closes. Its state and rules
 * are QuestionState's (state.ts).
 */
export async function questionWorkflow(input: m.QuestionInput): Promise<void> {
  const { runId, qid } = input;
  const q = new QuestionState(input, workflowInfo().startTime.getTime());
  const events = new EventBuffer(runId, null);
  // Someone waits on each of its few writes (a holder's long poll, the asker's call): no gathering window.
  void events.flushForever(false);
  // The asker's ask_user call is waiting on this key.
  q.onOver = () => events.wake(`${runId}/${qid}`);
  // An asking of the same words later is a new execution under the same qid: its items get names of their own.
  const itemId = (hop: number) => questionItemId(qid, workflowInfo().firstExecutionRunId, hop);
  const ctx = { q, events, itemId };
  const first = input.toUser || input.ancestors.length === 0 ? m.USER : input.ancestors[0];
  // The first holder, whom the asking gateway told at once, may answer or escalate before this first task has run:
  // its Update then waits among this task's jobs for its handler, and must find the question already in its hands.
  q.passTo(first);

  setHandler(m.questionQuery, () => q.view(), { description: 'The question: its sub-questions, who holds it, the chain so far, and its answer once there is one.' });
  setHandler(m.answerQuestionUpdate, (a) => answer(ctx, a), {
    validator: ({ by, answers, proof, asked_at }) => void (q.checkAnswer(by, answers), q.checkProof(by.operator, { answers }, proof, asked_at)),
  });
  setHandler(m.escalateQuestionUpdate, (e) => escalate(ctx, e), { validator: ({ by }) => q.checkHolder(by, 'stale') });
  setHandler(m.declineQuestionUpdate, (d) => decline(ctx, d), {
    validator: ({ operator, reason, proof, asked_at }) => void (q.checkDecline(operator), q.checkProof(operator, { decline: reason }, proof, asked_at)),
  });
  setHandler(m.questionRunEndedSignal, () => void ((q.runEnded = true), q.cancel()));
  setHandler(m.questionWithdrawnSignal, ({ reason }) => void (q.cancel() && events.emit('question_withdrawn', { qid, reason }, input.askerId)));
  setHandler(wakeSignal, () => undefined);

  // The asker's watchdog does not count it idle while it waits on its own question (workflows/agent/watchdog.ts).
  const asker = input.system ? null : agentWorkflowId(runId, input.askerId);
  // The asker and the run are told together, one round trip before the question moves.
  const askerTold = asker !== null ? tell(asker, askingSignal, { qid, open: true }) : undefined;
  events.emit('question_asked', { qid, questions: input.questions.length, to_user: input.toUser === true }, input.askerId);
  // The run ends its open questions with it; a question whose run has already ended is over at once.
  const runTold = tell(runWorkflowId(runId), questionOpenedSignal, { qid });
  // The run counted this question open before it started (openQuestion, or the run's own watchdog started it), so
  // its first holder is told in the first workflow task, beside the asker and the run. A run that ended in between
  // still ends it at once; the holder's copy then only meets a closed question.
  const routed = tellHolder(ctx, first, null);
  await askerTold;
  if (!(await runTold)) q.cancel();
  await routed;

  await condition(() => q.status !== 'pending');
  const over = q.status;
  setCurrentDetails(`Over: ${over}.`);
  upsertSearchAttributes([{ key: statusKey, value: over }]);
  if (asker !== null) await tell(asker, askingSignal, { qid, open: false });
  if (input.system && (over === 'answered' || over === 'declined')) {
    await deliverSystemAnswer(runId, qid, input.system, {
      answers: q.answers,
      operator: q.answeredBy?.operator ?? null,
      declined: q.declined?.reason ?? null,
      byPerson: q.answeredByPerson && { ...q.answeredByPerson, asked_at: q.askedAt },
    });
  }
  // Open a while for a re-issued call, unless the run ends first (an ended run leaves nothing running).
  if (over === 'answered' || over === 'declined') await condition(() => q.runEnded, input.reattachMs);
  await tell(runWorkflowId(runId), questionClosedSignal, { qid });
  await events.drain();
}

interface Ctx {
  q: QuestionState;
  events: EventBuffer;
  /** The name of the question's inbox item at a hop (items.ts). */
  itemId: (hop: number) => string;
}

const label = (who: m.Actor) => who.agent_id ?? (who.operator ? `operator ${who.operator}` : 'unknown');

function answer({ q, events }: Ctx, { by, answers, reason, proof }: m.AnswerInput): { ok: true; qid: string; over: m.QuestionOver } {
  q.answer(by, answers, reason, proof);
  events.emit('question_answered', { qid: q.input.qid, by: label(by), reason, hops: q.chain.length }, q.input.askerId);
  return { ok: true, qid: q.input.qid, over: overOf(q) };
}

function overOf(q: QuestionState): m.QuestionOver {
  const { qid, status, answers, answer_text, declined } = q.view();
  return { qid, status, answers, answer_text, declined, asking: workflowInfo().firstExecutionRunId };
}

async function escalate(ctx: Ctx, { by, reason }: { by: m.Actor; reason: string }): Promise<{ ok: true; qid: string; new_holder: string | null }> {
  const { q, events } = ctx;
  const next = q.nextAfter(q.holder!);
  events.emit('question_escalated', { qid: q.input.qid, by: label(by), to: next, reason }, q.input.askerId);
  await route(ctx, next, reason);
  return { ok: true, qid: q.input.qid, new_holder: next === m.USER ? null : next };
}

function decline({ q, events }: Ctx, { operator, reason }: { operator: string; reason: string }): { ok: true; qid: string; over: m.QuestionOver } {
  events.emit('question_declined', { qid: q.input.qid, by: `operator ${operator}`, reason }, q.input.askerId);
  q.decline(operator, reason);
  return { ok: true, qid: q.input.qid, over: overOf(q) };
}

/** Gives the question to its next holder: an agent's inbox, or the human gateway past the root. */
async function route(ctx: Ctx, to: string, reason: string | null): Promise<void> {
  ctx.q.passTo(to);
  await tellHolder(ctx, to, reason);
}

/** Tells the holder it was given to, unless it has already passed it on (in the same workflow task). */
async function tellHolder({ q, events, itemId }: Ctx, to: string, reason: string | null): Promise<void> {
  const { runId, qid, askerId } = q.input;
  // (The chain's end, not the holder: a question the gateway's absence has already ended is still routed as before.)
  if (q.chain.at(-1) !== to) return;
  setCurrentDetails(to === m.USER ? 'Waiting for a person at the human gateway.' : `Waiting for ${to} to answer or escalate it.`);
  upsertSearchAttributes([{ key: statusKey, value: to === m.USER ? 'awaiting_user' : 'awaiting_agent' }]);
  events.emit('question_routed', { qid, holder: to, reason }, askerId);
  const input = q.input;
  if (to === m.USER) return tellPeople(noticeOf(input, q.chain.length), events);
  const words = inboxQuestion({ qid, askerId, askerRole: input.askerRole, questions: input.questions, context: typeof input.context === 'string' ? input.context : null, via: q.chain.slice(0, -1).filter((h) => h !== m.USER) });
  // A long question goes into the holder's inbox as a reference, as a long message does: a leader asked many
  // long questions would otherwise carry them all in its workflow state, past Temporal's payload limits.
  let content: Text = words;
  if (textBytes(words) > INLINE_TEXT_BYTES) [content] = await store.keepTexts({ runId, texts: [words] });
  await tell(agentWorkflowId(runId, to), systemMessageSignal, { message_id: itemId(q.chain.length), content });
  // The holder's long poll hears of it from this write, not after the holder's own gathering window.
  events.wake(`${runId}/${to}`);
}

/** What people are told when a question reaches them: what kind, from whom, its words, and the inbox to answer in. */
function noticeOf(input: m.QuestionInput, hop: number): Notice {
  const first = input.questions[0]?.question ?? '';
  const context = typeof input.context === 'string' ? gist(input.context, 500) : '';
  const words = [...input.questions.map((q, i) => `${i + 1}. ${q.question}`), ...(context ? [`Context: ${context}`] : [])].join('\n');
  const base = { id: `${input.runId}/${input.qid}/${hop}`, run_id: input.runId, text: words, path: '/inbox' };
  switch (input.system?.kind) {
    case 'root_review':
      return { ...base, kind: 'root_review', title: 'The root agent asks you to review its work' };
    case 'root_termination':
      return { ...base, kind: 'root_termination', title: 'The root agent asks to end the run' };
    case 'root_stopped':
      return { ...base, kind: 'stopped', title: gist(first) };
    case 'review_overdue':
    case 'agent_idle':
      // The situation, not the question's words ("What should … be told?"): the context's first clause says it.
      return { ...base, kind: 'escalation', title: `The watchdog: ${gist((context || first).split(/[;.] /)[0])}` };
    default:
      return { ...base, kind: 'question', title: `A question from ${input.askerRole} (${input.askerId}): ${gist(first)}` };
  }
}
