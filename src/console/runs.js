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

/** Worst first: what needs someone comes to the top of the page when sorted by health. */
const HEALTH = ['needs_attention', 'needs_you', 'working', 'active', 'failed', 'terminated', 'cancelled', 'completed'];
const HEALTH_LABEL = { needs_attention: 'needs attention', needs_you: 'needs you', working: 'working' };
const HEALTHS = [
  ['', 'any health'],
  ['needs_attention', 'needs attention'],
  ['needs_you', 'needs you'],
  ['working', 'working'],
];

/** The operator API's run list, newest first (or worst first), a page at a time. */
export function runsView(root) {
  const filter = el('select', { id: 'run-filter' }, FILTERS.map(([value, label]) => el('option', { value, text: label })));
  const healthFilter = el('select', { id: 'health-filter', 'aria-label': 'Health' }, HEALTHS.map(([value, label]) => el('option', { value, text: label })));
  const sort = el('select', { id: 'run-sort', 'aria-label': 'Order' }, [el('option', { value: 'newest', text: 'newest first' }), el('option', { value: 'health', text: 'worst health first' })]);
  const reload = el('button', { type: 'button', text: 'Refresh' });
  const more = el('button', { type: 'button', text: 'More', hidden: true });
  const body = el('tbody');
  const error = el('p', { class: 'error', role: 'alert', hidden: true });
  const empty = el('p', { class: 'empty', text: 'No runs yet. Start one with POST /api/runs or `npm run dipper -- start-run`.', hidden: true });
  const head = el('tr', {}, ['Run', 'Status', 'Health', 'Task', 'Root agent', 'Started', 'Agents', ''].map((h) => el('th', { text: h })));
  root.replaceChildren(
    el('h2', { text: 'Runs' }),
    el('div', { class: 'toolbar' }, el('label', { for: 'run-filter', text: 'Show' }), filter, healthFilter, sort, reload),
    error,
    empty,
    el('table', { class: 'runs' }, el('thead', {}, head), body),
    more,
  );

  let next = null;
  let loaded = [];
  /** The rows loaded so far, filtered and ordered as chosen (in the page: the API pages newest first). */
  const show = () => {
    const rows = loaded.filter((r) => !healthFilter.value || r.health === healthFilter.value);
    if (sort.value === 'health') rows.sort((a, b) => HEALTH.indexOf(a.health) - HEALTH.indexOf(b.health));
    body.replaceChildren(...rows.map(row));
    empty.hidden = rows.length > 0;
  };
  const load = async (fresh) => {
    const params = new URLSearchParams({ page_size: '50' });
    if (filter.value) params.set('status', filter.value);
    if (!fresh && next) params.set('page_token', next);
    try {
      const page = await api(`/runs?${params}`);
      error.hidden = true;
      loaded = fresh ? page.runs : [...loaded, ...page.runs];
      next = page.next_page_token;
      more.hidden = !next;
      show();
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
    }
  };
  filter.addEventListener('change', () => void load(true));
  healthFilter.addEventListener('change', show);
  sort.addEventListener('change', show);
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
    el('td', { class: 'health-cell' }, healthOf(run)),
    el('td', { class: 'task', title: run.task ?? '', text: run.task ?? '' }),
    el('td', { class: 'mono', text: run.root_agent_id ?? '' }),
    el('td', { title: when(started), text: ago(started) }),
    el('td', { class: 'number', text: run.agent_count }),
    el('td', {}, temporalLink(runWorkflowId(run.run_id))),
  );
}

/** What needs whom: attention (agents stopped or stalled), then what waits for a person. */
function healthOf(run) {
  if (!HEALTH_LABEL[run.health]) return '';
  const counts = [];
  if (run.attention?.agents) counts.push(`${run.attention.agents} agent(s) stopped or stalled`);
  if (run.attention?.needs_you) counts.push(`${run.attention.needs_you} waiting for you`);
  return [badge(HEALTH_LABEL[run.health], run.health), counts.length ? el('span', { class: 'muted', text: ` ${counts.join(' · ')}` }) : null];
}
