import { api, refreshEvery } from './api.js';
import { el } from './dom.js';
import { questionCard, questionOutcome } from './questionCard.js';

const REFRESH_MS = 3000;

/**
 * Every question waiting for a person, oldest first. Refreshing adds new
 * questions and drops those answered elsewhere, but never rebuilds a card
 * that is already shown: the person may be halfway through its form.
 * Returns the function that stops the refreshing.
 */
export function inboxView(root, { operator, count }) {
  const mayAnswer = operator.role === 'approver' || operator.role === 'admin';
  const list = el('div', { class: 'questions' });
  const outcomes = el('div', { class: 'outcomes' });
  const empty = el('p', { class: 'empty', text: 'No question is waiting for a person.', hidden: true });
  const error = el('p', { class: 'error', role: 'alert', hidden: true });
  root.replaceChildren(el('h2', { text: 'Questions waiting for a person' }), outcomes, error, empty, list);

  const cards = new Map();
  // Ended here: never shown again, even by a listing read just before the answer landed.
  const over = new Set();
  const drop = (qid) => {
    cards.get(qid)?.remove();
    cards.delete(qid);
    empty.hidden = cards.size > 0;
    count(cards.size);
  };
  const done = (view) => {
    over.add(view.qid);
    drop(view.qid);
    outcomes.prepend(questionOutcome(view));
  };

  return refreshEvery(REFRESH_MS, error, async () => {
    const { questions } = await api('/questions');
    const waiting = questions.filter((q) => !over.has(q.qid));
    const still = new Set(waiting.map((q) => q.qid));
    for (const qid of [...cards.keys()]) if (!still.has(qid)) drop(qid);
    for (const q of waiting) {
      if (cards.has(q.qid)) continue;
      const card = questionCard(q, { mayAnswer, done });
      const later = [...cards.values()].find((c) => Number(c.dataset.askedAt) > q.asked_at);
      list.insertBefore(card, later ?? null);
      cards.set(q.qid, card);
    }
    empty.hidden = cards.size > 0;
    count(cards.size);
  });
}
