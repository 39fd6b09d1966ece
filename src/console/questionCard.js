import { answerProblem } from './answers.js';
import { api, describe } from './api.js';
import { ago, el, errorLine, longText, when } from './dom.js';
import { reviewContext } from './reviewContext.js';
import { subQuestion } from './subQuestion.js';
import { questionWorkflowId, temporalLink } from './temporal.js';

/** Headings of the questions Dipper asks a person itself (workflows/question/system.ts). */
const SYSTEM = {
  root_review: 'The root asks you to review its work',
  root_termination: 'The root asks to end the run',
  review_overdue: 'A leader has left a review waiting',
  agent_idle: 'An agent has gone quiet',
  root_stopped: 'The root is stopped and waits for you',
};

const ROOT_REPORT = new Set(['root_review', 'root_termination']);

/**
 * A question waiting for a person, with the form to answer or decline it.
 * Submit is enabled only while every sub-question's answer passes the
 * rules the question workflow applies; `done(view)` gets the question as
 * it ended.
 */
export function questionCard(view, { mayAnswer, done }) {
  const path = `/runs/${encodeURIComponent(view.run_id)}/questions/${encodeURIComponent(view.qid)}`;
  const parts = view.questions.map((q, i) => subQuestion(view.qid, q, i));
  const submit = el('button', { type: 'submit', class: 'primary', text: 'Submit answer', disabled: true });
  const declineOpen = el('button', { type: 'button', text: 'Decline…', disabled: !mayAnswer });
  const reason = el('textarea', { id: `${view.qid}-reason`, rows: 2, maxlength: 4000, class: 'decline-reason' });
  const declineSend = el('button', { type: 'button', class: 'danger', text: 'Decline question', disabled: true });
  const declineRow = el('div', { class: 'decline', hidden: true }, el('label', { for: reason.id, text: 'Why you decline (the asker reads this)' }), reason, declineSend);
  const error = errorLine('');
  let busy = false;

  const check = () => {
    let valid = true;
    parts.forEach((part, i) => {
      const problem = answerProblem(view.questions[i], part.read(), i);
      part.show(problem);
      if (problem) valid = false;
    });
    submit.disabled = busy || !mayAnswer || !valid;
    declineSend.disabled = busy || !mayAnswer || reason.value.trim() === '';
  };
  const send = async (action, body) => {
    busy = true;
    error.hidden = true;
    check();
    try {
      await api(`${path}/${action}`, { method: 'POST', body });
      // The question as it ended: who answered, and the words the asker receives.
      done(await api(path));
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
    } finally {
      busy = false;
      check();
    }
  };

  const form = el('form', { class: 'answer-form', novalidate: true }, parts.map((p) => p.node), el('div', { class: 'actions' }, submit, declineOpen), declineRow, error);
  form.addEventListener('input', check);
  form.addEventListener('change', check);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!submit.disabled) void send('answer', { answers: parts.map((p) => p.read()) });
  });
  declineOpen.addEventListener('click', () => {
    declineRow.hidden = !declineRow.hidden;
    if (!declineRow.hidden) reason.focus();
  });
  declineSend.addEventListener('click', () => {
    if (!declineSend.disabled) void send('decline', { reason: reason.value.trim() });
  });
  check();

  return el(
    'article',
    { class: 'question card', 'data-qid': view.qid, 'data-asked-at': view.asked_at },
    el(
      'header',
      {},
      el('h3', { text: view.system ? `${SYSTEM[view.system.kind] ?? 'Dipper asks'} (${view.system.agent_id})` : `From ${view.asker_role}` }),
      el('span', { class: 'muted', title: when(view.asked_at), text: `${view.qid} · asked ${ago(view.asked_at)}` }),
      temporalLink(questionWorkflowId(view.run_id, view.qid)),
    ),
    el(
      'p',
      { class: 'meta' },
      'Run ',
      el('a', { href: `#/runs/${encodeURIComponent(view.run_id)}`, text: view.run_id }),
      ` · ${[view.asker_id, ...view.chain].map((h) => (h === 'user' ? 'a person' : h)).join(' → ')}`,
    ),
    view.context ? longText('blockquote', { class: 'context' }, typeof view.context === 'string' ? view.context : JSON.stringify(view.context)) : null,
    ROOT_REPORT.has(view.system?.kind) ? reviewContext(view) : null,
    mayAnswer ? null : el('p', { class: 'muted', text: 'Your role may read questions but not answer them (approver or admin needed).' }),
    form,
  );
}

/** What the person sees once a question is over: who ended it, and what the asker receives. */
export function questionOutcome(view) {
  const by = view.answered_by ? view.answered_by.operator || view.answered_by.agent_id : null;
  const head =
    view.status === 'answered'
      ? `Answered ${view.qid} (from ${view.asker_role}) as ${by}. The asker receives:`
      : view.status === 'declined'
        ? `Declined ${view.qid} (from ${view.asker_role}) as ${view.declined.operator}. The asker is told:`
        : `${view.qid} is ${view.status}.`;
  const words = view.status === 'answered' ? view.answer_text : view.status === 'declined' ? view.declined.reason : null;
  return el('div', { class: `outcome outcome-${view.status}`, role: 'status', 'data-qid': view.qid }, el('p', { text: head }), words !== null ? el('pre', { text: words }) : null);
}
