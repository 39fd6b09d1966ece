import { api, refreshEvery } from './api.js';
import { approvalCard, approvalOutcome } from './approvalCard.js';
import { el } from './dom.js';

const REFRESH_MS = 3000;

/**
 * Every iSphere send waiting for a person's approval, oldest first, kept
 * fresh as the question inbox is: new requests appear, decided or expired
 * ones leave, and a card being read is never rebuilt.
 */
export function approvalsView(root, { operator, count }) {
  const mayDecide = operator.role === 'approver' || operator.role === 'admin';
  const list = el('div', { class: 'approvals' });
  const outcomes = el('div', { class: 'outcomes' });
  const empty = el('p', { class: 'empty', text: 'No send is waiting for approval.', hidden: true });
  const error = el('p', { class: 'error', role: 'alert', hidden: true });
  root.replaceChildren(el('h2', { text: 'iSphere sends waiting for approval' }), outcomes, error, empty, list);

  const cards = new Map();
  const over = new Set();
  const drop = (id) => {
    cards.get(id)?.stopTimer();
    cards.get(id)?.remove();
    cards.delete(id);
    empty.hidden = cards.size > 0;
    count(cards.size);
  };
  const done = (view) => {
    over.add(view.approval_id);
    drop(view.approval_id);
    outcomes.prepend(approvalOutcome(view));
  };

  const stop = refreshEvery(REFRESH_MS, error, async () => {
    const { approvals } = await api('/isphere/approvals?status=pending');
    const waiting = approvals.filter((a) => !over.has(a.approval_id));
    const still = new Set(waiting.map((a) => a.approval_id));
    for (const id of [...cards.keys()]) if (!still.has(id)) drop(id);
    for (const a of waiting) {
      if (cards.has(a.approval_id)) continue;
      const card = approvalCard(a, { mayDecide, done });
      const later = [...cards.values()].find((c) => Number(c.dataset.requestedAt) > a.requested_at);
      list.insertBefore(card, later ?? null);
      cards.set(a.approval_id, card);
    }
    empty.hidden = cards.size > 0;
    count(cards.size);
  });
  return () => {
    stop();
    for (const card of cards.values()) card.stopTimer();
  };
}
