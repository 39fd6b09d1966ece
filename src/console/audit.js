import { api, describe } from './api.js';
import { badge, el, errorLine } from './dom.js';

/**
 * The iSphere audit chain: whether it verifies (every record's HMAC, every
 * link, every anchor), and its records, newest first, fifty at a time.
 */
export function auditView(root) {
  const status = el('p', { class: 'muted', text: 'Checking the chain…', role: 'status' });
  const problems = el('ul', { class: 'problems' });
  const rows = el('tbody');
  const more = el('button', { type: 'button', text: 'Older records', hidden: true });
  const error = errorLine('');
  const verify = el('button', { type: 'button', text: 'Verify again' });
  const table = el(
    'table',
    { class: 'audit' },
    el('thead', {}, el('tr', {}, ['seq', 'time', 'record', 'tool', 'target', 'result', 'approver', 'approval', 'hash'].map((h) => el('th', { text: h })))),
    rows,
  );
  root.replaceChildren(el('h2', { text: 'iSphere audit chain' }), el('div', { class: 'actions' }, status, verify), problems, error, table, more);
  let stopped = false;
  let before = null;

  const check = async () => {
    status.textContent = 'Checking the chain…';
    try {
      const v = await api('/isphere/audit/verify');
      if (stopped) return;
      status.replaceChildren(v.ok ? badge('verifies', 'ok') : badge('broken', 'error'), ` ${v.records} records, ${v.anchors} anchors`);
      problems.replaceChildren(...v.problems.map((p) => el('li', { class: 'error', text: p.message })));
    } catch (err) {
      status.textContent = describe(err);
    }
  };
  const load = async () => {
    try {
      const page = await api(`/isphere/audit?limit=50${before ? `&before=${before}` : ''}`);
      if (stopped) return;
      for (const r of page.records) {
        rows.append(
          el(
            'tr',
            { 'data-seq': r.seq },
            el('td', { text: String(r.seq) }),
            el('td', { text: r.at }),
            el('td', { text: r.kind }),
            el('td', { text: r.tool }),
            el('td', { text: `${r.target.display_name ?? ''} (${r.target.target_type} ${r.target.target_id})` }),
            el('td', { text: r.result === null ? '' : `${r.result}${r.reconciled ? ' (looked up)' : ''}` }),
            el('td', { text: `${r.approver} (${r.approved_via})` }),
            el('td', { text: r.approval_id }),
            el('td', { class: 'hash', title: r.hash, text: r.hash.slice(0, 12) }),
          ),
        );
      }
      before = page.next_before;
      more.hidden = before === null;
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
    }
  };
  verify.addEventListener('click', () => void check());
  more.addEventListener('click', () => void load());
  void check();
  void load();
  return () => {
    stopped = true;
  };
}
