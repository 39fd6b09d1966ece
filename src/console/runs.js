import { api, describe } from './api.js';
import { ago, badge, el, when } from './dom.js';
import { runWorkflowId, temporalLink } from './temporal.js';

const FILTERS = [
  ['', 'All runs'],
  ['active', 'Active'],
  ['ended', 'Ended'],
  ['completed', 'Completed'],
  ['cancelled', 'Cancelled'],
];

/** The operator API's run list, newest first, a page at a time. */
export function runsView(root) {
  const filter = el('select', { id: 'run-filter' }, FILTERS.map(([value, label]) => el('option', { value, text: label })));
  const reload = el('button', { type: 'button', text: 'Refresh' });
  const more = el('button', { type: 'button', text: 'More', hidden: true });
  const body = el('tbody');
  const error = el('p', { class: 'error', role: 'alert', hidden: true });
  const empty = el('p', { class: 'empty', text: 'No runs yet. Start one with POST /api/runs or `npm run dipper -- start-run`.', hidden: true });
  const head = el('tr', {}, ['Run', 'Status', 'Task', 'Root agent', 'Started', 'Agents', ''].map((h) => el('th', { text: h })));
  root.replaceChildren(
    el('h2', { text: 'Runs' }),
    el('div', { class: 'toolbar' }, el('label', { for: 'run-filter', text: 'Show' }), filter, reload),
    error,
    empty,
    el('table', { class: 'runs' }, el('thead', {}, head), body),
    more,
  );

  let next = null;
  const load = async (fresh) => {
    const params = new URLSearchParams({ page_size: '50' });
    if (filter.value) params.set('status', filter.value);
    if (!fresh && next) params.set('page_token', next);
    try {
      const page = await api(`/runs?${params}`);
      error.hidden = true;
      if (fresh) body.replaceChildren();
      for (const run of page.runs) body.append(row(run));
      next = page.next_page_token;
      more.hidden = !next;
      empty.hidden = body.children.length > 0;
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
    }
  };
  filter.addEventListener('change', () => void load(true));
  reload.addEventListener('click', () => void load(true));
  more.addEventListener('click', () => void load(false));
  void load(true);
  return () => undefined;
}

function row(run) {
  const started = Date.parse(run.started_at);
  return el(
    'tr',
    { 'data-run-id': run.run_id },
    el('td', {}, el('a', { href: `#/runs/${encodeURIComponent(run.run_id)}`, text: run.run_id })),
    el('td', {}, badge(run.status)),
    el('td', { class: 'task', title: run.task ?? '', text: run.task ?? '' }),
    el('td', { class: 'mono', text: run.root_agent_id ?? '' }),
    el('td', { title: when(started), text: ago(started) }),
    el('td', { class: 'number', text: run.agent_count }),
    el('td', {}, temporalLink(runWorkflowId(run.run_id))),
  );
}
