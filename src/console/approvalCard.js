import { api, describe } from './api.js';
import { ago, el, errorLine, longText, when } from './dom.js';
import { hiddenTextWarnings, markHidden } from './hiddenText.js';
import { approvalWorkflowId, temporalLink } from './temporal.js';

const TOOLS = { isphere_send_message: 'Send an iSphere message', isphere_send_file: 'Send an iSphere file' };

/** Seconds left as "12 min 5 s". */
function left(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/**
 * An iSphere send waiting for a person: who asks, where it goes, the exact
 * words (or the file's name, size and sha256) and what the approval binds,
 * with Approve and Reject (a rejection needs a reason, which the agent
 * reads). `done(view)` gets the approval as it was decided.
 */
export function approvalCard(view, { mayDecide, done }) {
  const path = `/runs/${encodeURIComponent(view.run_id)}/isphere/approvals/${encodeURIComponent(view.approval_id)}`;
  const b = view.binding;
  const approve = el('button', { type: 'button', class: 'primary', text: 'Approve send', disabled: !mayDecide });
  const rejectOpen = el('button', { type: 'button', text: 'Reject…', disabled: !mayDecide });
  const reason = el('textarea', { id: `${view.approval_id}-reason`, rows: 2, maxlength: 4000, class: 'decline-reason' });
  const rejectSend = el('button', { type: 'button', class: 'danger', text: 'Reject send', disabled: true });
  const rejectRow = el('div', { class: 'decline', hidden: true }, el('label', { for: reason.id, text: 'Why you reject it (the agent reads this)' }), reason, rejectSend);
  const countdown = el('span', { class: 'countdown' });
  const error = errorLine('');
  let busy = false;

  const tick = () => {
    const ms = view.decide_by - Date.now();
    countdown.textContent = ms > 0 ? `decide within ${left(ms)}` : 'expired';
    approve.disabled = busy || !mayDecide || ms <= 0;
    rejectSend.disabled = busy || !mayDecide || ms <= 0 || reason.value.trim() === '';
  };
  const send = async (action, body) => {
    busy = true;
    error.hidden = true;
    tick();
    try {
      await api(`${path}/${action}`, { method: 'POST', body });
      done(await api(path));
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
    } finally {
      busy = false;
      tick();
    }
  };
  approve.addEventListener('click', () => {
    if (!approve.disabled) void send('approve', {});
  });
  rejectOpen.addEventListener('click', () => {
    rejectRow.hidden = !rejectRow.hidden;
    if (!rejectRow.hidden) reason.focus();
  });
  reason.addEventListener('input', tick);
  rejectSend.addEventListener('click', () => {
    if (!rejectSend.disabled) void send('reject', { reason: reason.value.trim() });
  });
  tick();
  const timer = setInterval(tick, 1000);

  const words = typeof view.words === 'string' ? view.words : null;
  const warnings = words === null ? [] : hiddenTextWarnings(words);
  const card = el(
    'article',
    { class: 'approval card', 'data-approval-id': view.approval_id, 'data-requested-at': view.requested_at },
    el(
      'header',
      {},
      el('h3', { text: `${TOOLS[b.tool] ?? b.tool} to ${b.target.display_name ?? b.target.target_id}${told(view.target_details) ? ` (${told(view.target_details)})` : ''}` }),
      el('span', { class: 'muted', title: when(view.requested_at), text: `${view.approval_id} · asked ${ago(view.requested_at)} · ` }),
      countdown,
      temporalLink(approvalWorkflowId(view.run_id, view.approval_id)),
    ),
    el(
      'p',
      { class: 'meta' },
      'Run ',
      el('a', { href: `#/runs/${encodeURIComponent(view.run_id)}`, text: view.run_id }),
      ` · asked by ${view.requester.role} (${view.requester.agent_id}) · ${b.target.target_type} ${b.target.target_id}`,
    ),
    words !== null ? longText('blockquote', { class: 'words' }, words) : null,
    // Before a person approves text that does not read as it is sent: what is hidden, and the text with it shown.
    warnings.length
      ? el(
          'div',
          { class: 'hidden-text', role: 'alert' },
          el('p', { text: 'Check before you approve: this text holds what you may not see.' }),
          el('ul', {}, warnings.map((w) => el('li', { text: w }))),
          longText('pre', { class: 'words-marked' }, markHidden(words)),
        )
      : null,
    el(
      'dl',
      { class: 'binding' },
      [el('dt', { text: 'to' }), el('dd', { class: 'target' }, `${b.target.target_type} ${b.target.target_id}`, b.target.display_name ? ` · ${b.target.display_name}` : '')],
      Object.entries(view.target_details ?? {})
        .filter(([, v]) => v !== null && v !== '')
        .map(([k, v]) => [el('dt', { text: k.replace(/_/g, ' ') }), el('dd', { 'data-field': k, text: String(v) })]),
      b.content_sha256 ? [el('dt', { text: 'content sha256' }), el('dd', { class: 'hash', text: b.content_sha256 })] : null,
      b.file_sha256 ? [el('dt', { text: 'file sha256' }), el('dd', { class: 'hash', text: b.file_sha256 }), el('dt', { text: 'size' }), el('dd', { text: `${b.file_size_bytes} bytes` })] : null,
    ),
    mayDecide ? null : el('p', { class: 'muted', text: 'Your role may read approvals but not decide them (approver or admin needed).' }),
    el('div', { class: 'actions' }, approve, rejectOpen),
    rejectRow,
    error,
  );
  card.stopTimer = () => clearInterval(timer);
  return card;
}

/** What the person sees once decided: the decision and what the agent is told. */
export function approvalOutcome(view) {
  const d = view.decision;
  const head = d
    ? d.decision === 'approve'
      ? `Approved ${view.approval_id} as ${d.approver}. The agent is told it may send.`
      : `Rejected ${view.approval_id} as ${d.approver}. The agent is told:`
    : `${view.approval_id} is ${view.status}.`;
  return el('div', { class: `outcome outcome-${view.status}`, role: 'status', 'data-approval-id': view.approval_id }, el('p', { text: head }), d?.reason ? el('pre', { text: d.reason }) : null);
}

/** The fields that tell two targets of one name apart, in a few words for the heading. */
function told(details) {
  if (!details) return '';
  return ['department', 'title', 'account', 'member_count']
    .filter((k) => details[k] !== null && details[k] !== undefined && details[k] !== '')
    .map((k) => (k === 'member_count' ? `${details[k]} members` : String(details[k])))
    .join(' · ');
}
