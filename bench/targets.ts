import type { Row } from './measure';
import { summarize } from './stats';

/**
 * Issue 40's targets, read from this run's rows against this run's floors,
 * beside the figures the issue measured at f4c909b (a quiet 2-core machine;
 * floors then: no-op 2.02, Update 5.88, Query 4.10 ms). Milliseconds move
 * with the machine; the ratios are what compare across runs.
 */
interface Target {
  operation: string;
  /** The issue's figure at f4c909b, as it gave it. */
  then: string;
  /** What the ratio divides by, in words. */
  against: string;
  /** The ratio's bound; `underMs` adds a bound on the median itself. */
  atMost: number;
  underMs?: number;
  /** The ratio from this run's medians (name → median); undefined when a row it needs did not run. */
  ratio(m: (name: string) => number | undefined): { median: number; ratio: number } | undefined;
}

const by = (num: string, ...den: string[]) => (m: (name: string) => number | undefined) => {
  const top = m(num);
  const parts = den.map((d) => m(d));
  if (top === undefined || parts.some((p) => p === undefined)) return undefined;
  return { median: top, ratio: top / (parts as number[]).reduce((a, b) => a + b, 0) };
};

const NOOP = 'no-op tool (`/mcp/bench`)';
const UPDATE = 'bare Temporal Update';
const QUERY = 'bare Temporal Query';

export const TARGETS: Target[] = [
  { operation: 'send_message', then: '8.11 ms, 1.03x (no-op + Update)', against: 'no-op + Update', atMost: 1.3, ratio: by('send_message, 1 → 1, sequential', NOOP, UPDATE) },
  { operation: 'list_peers, 10 agents', then: '8.13 ms, 1.33x (no-op + Query)', against: 'no-op + Query', atMost: 1.3, ratio: by('list_peers all, 10 agents', NOOP, QUERY) },
  {
    operation: 'list_peers, 1,000 agents',
    then: '21.5 ms, 3.5x (no-op + Query; no same-bytes floor then)',
    against: 'same-bytes no-op',
    atMost: 1.5,
    ratio: by('list_peers all, 1,000 agents', 'no-op tool, same bytes as list_peers over 1,000 agents'),
  },
  { operation: 'spawn_agent', then: '150 ms, 25x Update', against: 'Update', atMost: 4, ratio: by('spawn_agent, sequential', UPDATE) },
  { operation: 'declare_plan (3 tasks)', then: '50.2 ms, 8.5x Update', against: 'Update', atMost: 3, ratio: by('declare_plan, 3 tasks', UPDATE) },
  { operation: 'remove_plan', then: '49.9 ms, 8.5x Update', against: 'Update', atMost: 3, ratio: by('remove_plan', UPDATE) },
  {
    operation: 'ask_user, answered 1 hop up',
    then: '300 ms, 51x Update (the whole round trip)',
    against: "Update, beyond the answerer's own answer_question call",
    atMost: 4,
    ratio: (m) => {
      const ask = m('ask_user, answered 1 hop up');
      const answer = m("answer_question, the answerer's own call (1 hop)");
      const update = m(UPDATE);
      return ask === undefined || answer === undefined || update === undefined ? undefined : { median: ask, ratio: (ask - answer) / update };
    },
  },
  { operation: 'ask_user, answered 3 hops up', then: '502 ms, 85x Update', against: 'Update (no target of its own)', atMost: Number.POSITIVE_INFINITY, ratio: by('ask_user, answered 3 hops up', UPDATE) },
  {
    operation: 'task_create',
    then: '99.9 ms (a workflow of its own)',
    against: 'Update + the Task API call',
    atMost: 2,
    ratio: by('task_create (one task)', UPDATE, 'Task API read, direct (no MCP)'),
  },
  {
    operation: 'a Task API read (task_get)',
    then: '100.0 ms through a workflow',
    against: 'no-op + the Task API call (no target of its own)',
    atMost: Number.POSITIVE_INFINITY,
    ratio: by('task_get (read straight from the gateway)', NOOP, 'Task API read, direct (no MCP)'),
  },
  {
    operation: 'create_team, 100 members',
    then: '3,468 ms, 590x Update',
    against: '100 child starts',
    atMost: 2,
    underMs: 1000,
    ratio: by('create_team, 100 members (building the 1,000-agent run)', '100 child starts in one workflow task, until the parent heard all started'),
  },
];

function figure(x: number): string {
  return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0);
}

/** The targets table for docs/performance.md: one line per target, met or not. */
export function targetsTable(rows: Row[]): string {
  const medians = new Map(rows.map((r) => [r.name, summarize(r.samples).median] as const));
  const m = (name: string) => {
    const found = [...medians].find(([n]) => n === name || n.startsWith(name));
    return found && Number.isFinite(found[1]) ? found[1] : undefined;
  };
  const lines = TARGETS.map((t) => {
    const now = t.ratio(m);
    const bound = Number.isFinite(t.atMost) ? `≤ ${t.atMost}x${t.underMs ? ` and < ${t.underMs} ms` : ''}` : '—';
    if (!now) return [t.operation, t.then, 'not run', t.against, bound, '—'];
    const met = !Number.isFinite(t.atMost) ? '—' : now.ratio <= t.atMost && (t.underMs === undefined || now.median < t.underMs) ? 'met' : '**not met**';
    return [t.operation, t.then, `${figure(now.median)} ms, ${now.ratio.toFixed(2)}x`, t.against, bound, met];
  });
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [row(['operation', 'f4c909b (issue 40)', 'this run', 'ratio to', 'target', '']), row(['---', '---', '---:', '---', '---', '---']), ...lines.map(row)].join('\n');
}
