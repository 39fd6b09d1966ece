import { agentTree } from './agentTree.js';
import { api, refreshEvery } from './api.js';
import { badge, el, when } from './dom.js';
import { EventTail } from './events.js';
import { questionWorkflowId, runWorkflowId, temporalLink } from './temporal.js';

const REFRESH_MS = 5000;

/** One run: what it is, its agents as a tree, its latest events and its questions. Refreshes itself. */
export function runView(root, runId) {
  const path = `/runs/${encodeURIComponent(runId)}`;
  const summary = el('div', { class: 'run-summary' });
  const tree = el('div', { class: 'agents' });
  const questions = el('div', { class: 'run-questions' });
  const events = el('div', { class: 'events' });
  const error = el('p', { class: 'error', role: 'alert', hidden: true });
  root.replaceChildren(
    el('p', {}, el('a', { href: '#/runs', text: '← All runs' })),
    el('h2', {}, `Run ${runId} `, temporalLink(runWorkflowId(runId))),
    error,
    summary,
    el('h3', { text: 'Agents' }),
    tree,
    el('h3', { text: 'Questions' }),
    questions,
    el('h3', { text: 'Recent events' }),
    events,
  );

  const tail = new EventTail(path);
  return refreshEvery(REFRESH_MS, error, async () => {
    const [run, { agents }] = await Promise.all([api(path), api(`${path}/agents`), tail.pull()]);
    const usage = new Map((run.model_usage?.by_agent ?? []).map((u) => [u.agent_id, u]));
    tree.replaceChildren(agentTree(runId, agents, run.root_agent_id, usage));
    const views = await questionViews(path, tail.qids());
    summary.replaceChildren(runSummary(run, healthOf(run, agents, views)));
    questions.replaceChildren(questionList(runId, views));
    events.replaceChildren(tail.table());
  });
}

/** The runs list's words for an active run: the worst of its agents, then whether a person is waited for. */
const HEALTH = { needs_attention: 'needs attention', needs_you: 'needs you', working: 'working' };
function healthOf(run, agents, views) {
  if (run.status !== 'active') return null;
  const stuck = agents.filter((a) => a.health?.state === 'stopped' || a.health?.state === 'stalled');
  if (stuck.length > 0) return { health: 'needs_attention', note: `${stuck.map((a) => a.name || a.agent_id).join(', ')}: see the agents below` };
  const asking = views.filter((v) => v.status === 'pending' && v.holder === 'user').length;
  if (asking > 0 || (run.pending_root ?? []).length > 0) return { health: 'needs_you', note: 'a question waits in the Inbox' };
  return { health: 'working', note: '' };
}

function runSummary(run, health) {
  const task = typeof run.task === 'string' ? run.task : JSON.stringify(run.task);
  const rows = [
    ['Status', badge(run.status)],
    ...(health ? [['Health', [badge(HEALTH[health.health], health.health), health.note ? el('span', { class: 'muted', text: ` ${health.note}` }) : null]]] : []),
    ['Task', el('span', { class: 'task-text', text: task })],
    ['Root agent', el('span', { class: 'mono', text: run.root_agent_id })],
    ['Agents', String(run.agent_count)],
    ['Model use', modelUse(run.model_usage?.total)],
    ['Started', when(run.created_at)],
    ['Deadline', run.deadline_at ? when(Date.parse(run.deadline_at)) : 'none'],
  ];
  for (const report of run.pending_root ?? []) {
    const detail = typeof report.detail === 'string' ? report.detail : JSON.stringify(report.detail);
    rows.push([`Root asks (${report.kind})`, el('span', { class: 'task-text', text: detail })]);
  }
  return el('dl', {}, rows.map(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)]));
}

/** Tokens in and out and requests answered, as the model proxy counted them; runs of other runtimes have none. */
export function modelUse(u) {
  if (!u || u.requests === 0) return 'none through Dipper\'s model proxy';
  const n = (x) => x.toLocaleString('en');
  return `${n(u.input_tokens + u.output_tokens)} tokens (${n(u.input_tokens)} in, ${n(u.output_tokens)} out) in ${n(u.requests)} model requests`;
}

/** The run's latest questions, however each stands now (the events name them; each is read whole). */
async function questionViews(path, qids) {
  const views = await Promise.all(qids.map((qid) => api(`${path}/questions/${encodeURIComponent(qid)}`).catch(() => null)));
  return views.filter((v) => v !== null);
}

function questionList(runId, views) {
  if (views.length === 0) return el('p', { class: 'empty', text: 'No questions asked.' });
  const items = views
    .map((v) =>
      el(
        'li',
        { 'data-qid': v.qid },
        badge(v.status),
        ` ${v.questions[0]?.question ?? ''} `,
        el('span', { class: 'muted', text: `from ${v.asker_role} · ${v.status === 'pending' ? `held by ${v.holder === 'user' ? 'a person' : v.holder}` : v.qid}` }),
        v.status === 'pending' && v.holder === 'user' ? el('a', { href: '#/inbox', text: ' answer in the inbox' }) : null,
        ' ',
        temporalLink(questionWorkflowId(runId, v.qid)),
      ),
    );
  return el('ul', { class: 'question-list' }, items);
}
