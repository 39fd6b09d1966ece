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
  // A root's review and its request to end the run are one card: two verdicts on one report, side by side.
  const rootCards = new Map();
  const holderOf = (q) => {
    if (q.system?.kind !== 'root_review' && q.system?.kind !== 'root_termination') return null;
    let holder = rootCards.get(q.run_id);
    if (!holder) {
      const body = el('div', { class: 'root-decisions' });
      holder = el(
        'section',
        { class: 'card root-decision', 'data-run-id': q.run_id, 'data-asked-at': q.asked_at },
        el('h3', {}, 'The root of run ', el('a', { href: `#/runs/${encodeURIComponent(q.run_id)}`, text: q.run_id }), ' waits for your decision'),
        el('p', { class: 'muted', text: 'Approving its request to end the run ends it; Rework on either sends it back to work with your words.' }),
        body,
      );
      holder.body = body;
      rootCards.set(q.run_id, holder);
    }
    return holder;
  };
  const drop = (qid) => {
    const card = cards.get(qid);
    card?.remove();
    cards.delete(qid);
    for (const [run, holder] of rootCards) {
      if (holder.body.children.length === 0) {
        holder.remove();
        rootCards.delete(run);
      }
    }
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
      cards.set(q.qid, card);
      const holder = holderOf(q);
      if (holder) {
        // The review first, then the request to end the run.
        card.classList.add('nested');
        if (q.system.kind === 'root_review') holder.body.prepend(card);
        else holder.body.append(card);
        if (holder.isConnected) continue;
      }
      const shown = holder ?? card;
      const later = [...list.children].find((c) => Number(c.dataset.askedAt) > q.asked_at);
      list.insertBefore(shown, later ?? null);
    }
    empty.hidden = cards.size > 0;
    count(cards.size);
  });
}
