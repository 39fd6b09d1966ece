import { ago, badge, el } from './dom.js';
import { agentWorkflowId, temporalLink } from './temporal.js';

/**
 * The run's agents nested by leader. A directory row names its team and
 * the teams it leads; an agent's leader is whoever leads its team (or
 * `leader_id`, where a row carries it).
 */
export function agentTree(runId, agents, rootId, usage = new Map()) {
  const leadOf = new Map();
  for (const a of agents) for (const team of a.is_leader_of ?? []) leadOf.set(team, a.agent_id);
  const known = new Set(agents.map((a) => a.agent_id));
  const leaderOf = (a) => a.leader_id ?? (a.team_id ? leadOf.get(a.team_id) : null) ?? null;
  const children = new Map();
  const tops = [];
  for (const a of agents) {
    const leader = leaderOf(a);
    if (leader && known.has(leader) && leader !== a.agent_id) {
      if (!children.has(leader)) children.set(leader, []);
      children.get(leader).push(a);
    } else tops.push(a);
  }
  // The root first, then anyone whose leader is not in the list.
  tops.sort((x, y) => (x.agent_id === rootId ? -1 : y.agent_id === rootId ? 1 : 0));
  const shown = new Set();
  const branch = (list) =>
    el(
      'ul',
      { class: 'tree' },
      list.map((a) => {
        // Each agent once, so a cycle in a half-updated directory cannot hang the page.
        if (shown.has(a.agent_id)) return null;
        shown.add(a.agent_id);
        const below = children.get(a.agent_id) ?? [];
        return el('li', { 'data-agent-id': a.agent_id }, agentLine(runId, a, a.agent_id === rootId, usage.get(a.agent_id)), below.length ? branch(below) : null, unstarted(a.plan));
      }),
    );
  const tree = branch(tops);
  // Agents only a cycle leads to still get a line of their own.
  const rest = agents.filter((a) => !shown.has(a.agent_id));
  if (rest.length) tree.append(...branch(rest).children);
  return tree;
}

const STOPPED = { crashed: 'crashed out: needs attention', budget: 'budget spent: needs attention' };

/** What the agent does or waits on (its workflow's own account, workflows/agent/health.ts), in a few words. */
function healthText(h) {
  const w = h.waiting_on;
  switch (h.state) {
    case 'stopped':
      return STOPPED[w?.why] ?? 'stopped: needs attention';
    case 'stalled':
      return 'stalled: needs attention';
    case 'owes':
      return `owes ${w.ids.length === 1 ? 'a review' : `${w.ids.length} reviews`}`;
    case 'waiting':
      if (w?.kind === 'leader') return w.id ? `waits for its leader's ${w.for === 'review' ? 'review' : 'answer'}` : `waits for you (${w.for})`;
      if (w?.kind === 'question') return `waits for an answer (${w.ids.join(', ')})`;
      if (w?.kind === 'runtime') return w.for === 'start' ? 'not started yet' : 'stopping';
      if (w?.kind === 'children') return `waits on ${w.ids.length} agent(s)`;
      return 'waiting';
    default:
      return h.state;
  }
}

function healthChip(h) {
  if (!h || h.state === 'ended') return null;
  const attention = h.state === 'stopped' || h.state === 'stalled';
  const text = `${healthText(h)}${h.since ? ` · since ${ago(h.since)}` : ''}`;
  return [el('span', { class: `health health-${h.state}${attention ? ' flag flag-stopped' : ''}`, title: h.line, text }), waitsOn(h.waiting_on)];
}

/** Whom or what it waits on, each a link: an agent's line on this page, or the inbox for a person's question. */
function waitsOn(w) {
  if (!w) return null;
  const agents = w.kind === 'children' || w.kind === 'review_of' ? w.ids : w.kind === 'leader' && w.id ? [w.id] : [];
  const links = agents.slice(0, 5).map((id) => {
    const go = el('button', { type: 'button', class: 'link waits-on', 'data-target': id, text: id });
    go.addEventListener('click', () => {
      const line = go.ownerDocument.querySelector(`li[data-agent-id="${id}"] > .agent`);
      line?.scrollIntoView({ block: 'center' });
      line?.classList.add('pointed');
      setTimeout(() => line?.classList.remove('pointed'), 1500);
    });
    return go;
  });
  if (w.kind === 'question' || (w.kind === 'leader' && !w.id)) links.push(el('a', { class: 'waits-on', href: '#/inbox', text: 'in the inbox' }));
  if (links.length === 0) return null;
  const more = agents.length > 5 ? el('span', { class: 'muted', text: ` +${agents.length - 5}` }) : null;
  return el('span', { class: 'waits-on-list' }, '→ ', links, more);
}

/** The plan's tasks nobody has been spawned for yet: ready ones, and those blocked on others. */
function unstarted(plan) {
  const open = (plan?.tasks ?? []).filter((t) => !t.agent_id && (t.status === 'ready' || t.status === 'blocked'));
  if (open.length === 0) return null;
  return el(
    'ul',
    { class: 'tree plan-tasks' },
    open.map((t) => {
      const waiting = t.status === 'blocked' ? `waits for ${t.depends_on.join(', ')}` : 'ready to spawn';
      return el('li', { 'data-plan-task': t.id }, el('span', { class: 'plan-task', text: `plan task ${t.id}` }), el('span', { class: 'agent-role', text: t.role }), el('span', { class: 'muted', text: `not started · ${waiting}` }));
    }),
  );
}

function agentLine(runId, a, isRoot, usage) {
  // A flag the status word does not already say (a leader can be both active and waiting for its review).
  const reviewPending = (a.review_pending ?? false) && a.status !== 'review_pending';
  const terminationRequested = (a.termination_requested ?? false) && a.status !== 'termination_requested';
  const depth = a.inbox_depth;
  // A stopped or stalled agent is still `active` to the spec; its status must not look healthy beside the red chip.
  const attention = a.health?.state === 'stopped' || a.health?.state === 'stalled';
  return el(
    'div',
    { class: 'agent' },
    el('strong', { class: 'agent-name', text: a.name || a.agent_id }),
    el('span', { class: 'agent-role', text: isRoot && a.role !== 'root' ? `${a.role} (root)` : a.role }),
    badge(a.status.replace(/_/g, ' '), attention ? 'plain' : a.status),
    reviewPending ? el('span', { class: 'flag flag-review', text: 'review pending' }) : null,
    terminationRequested ? el('span', { class: 'flag flag-termination', text: 'termination requested' }) : null,
    healthChip(a.health),
    typeof depth === 'number' ? el('span', { class: 'inbox-depth', title: 'Messages waiting in its inbox', text: `inbox ${depth}` }) : null,
    usage ? el('span', { class: 'agent-usage', title: 'Model tokens (in + out) and requests, through Dipper\'s proxy', text: `${(usage.input_tokens + usage.output_tokens).toLocaleString('en')} tokens · ${usage.requests} requests` }) : null,
    el('span', { class: 'mono muted', text: a.agent_id }),
    temporalLink(agentWorkflowId(runId, a.agent_id)),
  );
}
