import { api, describe } from './api.js';
import { badge, el, errorLine, when } from './dom.js';

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
  const filter = el('input', { type: 'search', id: 'audit-filter', placeholder: 'Filter: run, agent, target, approval, result…', 'aria-label': 'Filter the records' });
  const table = el(
    'table',
    { class: 'audit' },
    el('thead', {}, el('tr', {}, ['seq', 'time', 'record', 'run', 'requester', 'tool', 'target', 'content', 'result', 'approver', 'approval', 'hash'].map((h) => el('th', { text: h })))),
    rows,
  );
  root.replaceChildren(el('h2', { text: 'iSphere audit chain' }), el('div', { class: 'actions' }, status, verify), problems, el('div', { class: 'toolbar' }, filter), error, table, more);
  /** Shows the loaded rows whose words hold every term typed. */
  const applyFilter = () => {
    const terms = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const tr of rows.children) tr.hidden = !terms.every((t) => tr.dataset.words.includes(t));
  };
  filter.addEventListener('input', applyFilter);
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
        const target = `${r.target.display_name ?? ''} (${r.target.target_type} ${r.target.target_id})`;
        const content = r.file_sha256 ? `file sha256 ${r.file_sha256.slice(0, 12)}… (${r.file_size_bytes} bytes)` : r.content_sha256 ? `sha256 ${r.content_sha256.slice(0, 12)}…` : '';
        const words = [r.kind, r.run_id, r.requester, r.tool, target, r.result ?? '', r.approver, r.approval_id].join(' ').toLowerCase();
        rows.append(
          el(
            'tr',
            { 'data-seq': r.seq, 'data-words': words },
            el('td', { text: String(r.seq) }),
            el('td', { title: r.at, text: when(Date.parse(r.at)) }),
            el('td', { text: r.kind }),
            el('td', {}, r.run_id ? el('a', { href: `#/runs/${encodeURIComponent(r.run_id)}`, class: 'mono', text: r.run_id }) : ''),
            el('td', { class: 'mono', text: r.requester ?? '' }),
            el('td', { text: r.tool }),
            el('td', { text: target }),
            el('td', { class: 'hash', title: r.file_sha256 ?? r.content_sha256 ?? '', text: content }),
            el('td', { text: r.result === null ? '' : `${r.result}${r.reconciled ? ' (looked up)' : ''}` }),
            el('td', { text: `${r.approver} (${r.approved_via})` }),
            el('td', { text: r.approval_id }),
            el('td', { class: 'hash', title: r.hash, text: r.hash.slice(0, 12) }),
          ),
        );
      }
      before = page.next_before;
      more.hidden = before === null;
      applyFilter();
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
