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
        return el('li', { 'data-agent-id': a.agent_id }, agentLine(runId, a, a.agent_id === rootId, usage.get(a.agent_id)), below.length ? branch(below) : null);
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
  return el('span', { class: `health health-${h.state}${attention ? ' flag flag-stopped' : ''}`, title: h.line, text });
}

function agentLine(runId, a, isRoot, usage) {
  const reviewPending = a.review_pending ?? a.status === 'review_pending';
  const terminationRequested = a.termination_requested ?? a.status === 'termination_requested';
  const depth = a.inbox_depth;
  return el(
    'div',
    { class: 'agent' },
    el('strong', { class: 'agent-name', text: a.name || a.agent_id }),
    el('span', { class: 'agent-role', text: isRoot && a.role !== 'root' ? `${a.role} (root)` : a.role }),
    badge(a.status),
    reviewPending ? el('span', { class: 'flag flag-review', text: 'review pending' }) : null,
    terminationRequested ? el('span', { class: 'flag flag-termination', text: 'termination requested' }) : null,
    healthChip(a.health),
    typeof depth === 'number' ? el('span', { class: 'inbox-depth', title: 'Messages waiting in its inbox', text: `inbox ${depth}` }) : null,
    usage ? el('span', { class: 'agent-usage', title: 'Model tokens (in + out) and requests, through Dipper\'s proxy', text: `${(usage.input_tokens + usage.output_tokens).toLocaleString('en')} tokens · ${usage.requests} requests` }) : null,
    el('span', { class: 'mono muted', text: a.agent_id }),
    temporalLink(agentWorkflowId(runId, a.agent_id)),
  );
}
