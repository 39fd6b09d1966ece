import { api } from './api.js';
import { el, when } from './dom.js';
import { byTime, describeEvent } from './events.js';

/** Events read at most (pages of 1,000) to find the last review, and shown from after it. */
const PAGES = 5;
const SHOWN = 30;

/**
 * What a person needs beside a root's report to decide on it: the files it
 * names (as they were when it reported), its plan with each task's state,
 * and what happened since the last time a person decided on its work.
 * Filled in after the card is shown; a part that cannot be read says so.
 */
export function reviewContext(view) {
  const box = el('div', { class: 'review-context' }, artifactList(view.artifacts ?? []));
  const plan = el('div', { class: 'review-plan' }, el('p', { class: 'muted', text: 'Reading the plan…' }));
  const since = el('div', { class: 'review-events' }, el('p', { class: 'muted', text: 'Reading the events…' }));
  box.append(plan, since);
  const run = `/runs/${encodeURIComponent(view.run_id)}`;
  const root = view.system.agent_id;
  api(`${run}/agents`)
    .then(({ agents }) => plan.replaceChildren(planTable(agents, root)))
    .catch(() => plan.replaceChildren(el('p', { class: 'muted', text: 'The plan could not be read.' })));
  eventsSinceLastReview(run, root, view.asked_at)
    .then((events) => since.replaceChildren(eventList(events)))
    .catch(() => since.replaceChildren(el('p', { class: 'muted', text: 'The events could not be read.' })));
  return box;
}

function artifactList(files) {
  if (files.length === 0) return el('p', { class: 'muted', text: 'Files: the report names none, and its plan has no artifacts yet.' });
  return el(
    'div',
    { class: 'review-files' },
    el('h4', { text: `Files (${files.length})` }),
    el(
      'ul',
      {},
      files.map((f) =>
        el(
          'li',
          { 'data-path': f.path },
          f.preview !== null
            ? el('details', {}, el('summary', {}, el('span', { class: 'mono', text: f.path }), ` · ${size(f.bytes)}`), el('pre', { class: 'preview', text: f.preview }))
            : [el('span', { class: 'mono', text: f.path }), ` · ${size(f.bytes)} · ${f.preview_omitted ? 'no preview (the card holds 12,000 characters of them)' : 'not text'}`],
        ),
      ),
    ),
  );
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function planTable(agents, rootId) {
  const root = agents.find((a) => a.agent_id === rootId);
  const tasks = root?.plan?.tasks ?? [];
  if (tasks.length === 0) return el('p', { class: 'muted', text: 'Plan: the root has none.' });
  const status = new Map(agents.map((a) => [a.agent_id, a.status]));
  return el(
    'div',
    {},
    el('h4', { text: `Plan ${root.plan.plan_id}` }),
    el(
      'table',
      { class: 'plan' },
      el('thead', {}, el('tr', {}, ['Task', 'Role', 'State', 'Agent'].map((h) => el('th', { text: h })))),
      el(
        'tbody',
        {},
        tasks.map((t) =>
          el(
            'tr',
            { 'data-plan-task': t.id },
            el('td', { class: 'mono', text: t.id }),
            el('td', { text: t.role }),
            el('td', { text: t.status.replace(/_/g, ' ') }),
            el('td', { class: 'mono', text: t.agent_id ? `${t.agent_id} (${status.get(t.agent_id) ?? '?'})` : 'not started' }),
          ),
        ),
      ),
    ),
  );
}

/** The run's events after the person's last decision on the root's work (or from the start), up to the question. */
async function eventsSinceLastReview(run, rootId, until) {
  let after = 0;
  let all = [];
  for (let i = 0; i < PAGES; i++) {
    const page = await api(`${run}/events?after=${after}&limit=1000`);
    all = all.concat(page.events);
    after = page.next_after;
    if (page.events.length < 1000) break;
  }
  all.sort(byTime);
  const decided = all.filter((e) => (e.type === 'completion.approved' || e.type === 'completion.rework') && e.agent_id === rootId && e.data?.by === 'user' && e.ts <= until);
  const from = decided.length ? decided[decided.length - 1].ts : 0;
  return { events: all.filter((e) => e.ts > from && e.ts <= until), from };
}

function eventList({ events, from }) {
  const head = from ? `Since the last decision on its work (${when(from)}): ${events.length} events` : `Since the run started: ${events.length} events`;
  const shown = events.slice(-SHOWN);
  return el(
    'div',
    {},
    el('h4', { text: head }),
    events.length > shown.length ? el('p', { class: 'muted', text: `The last ${shown.length}:` }) : null,
    el(
      'ul',
      { class: 'review-event-list' },
      shown.map((e) => el('li', {}, el('span', { class: 'muted', text: `${when(e.ts)} ` }), el('span', { class: 'mono', text: `${e.type} ` }), e.agent_id ? el('span', { class: 'mono muted', text: `${e.agent_id} ` }) : null, describeEvent(e))),
    ),
  );
}
