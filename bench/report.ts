import type { Floor, Row } from './measure';
import type { IdleLine } from './scenarios/idlePolls';
import { summarize, type Summary } from './stats';
import { targetsTable } from './targets';

export interface Machine {
  cpus: number;
  cpuModel: string;
  totalMemoryGiB: number;
  node: string;
  platform: string;
}

/** One process's resident memory around the large run, in MiB. */
export interface MemoryLine {
  process: string;
  before: number | undefined;
  after: number | undefined;
}

export interface ReportInput {
  machine: Machine;
  date: Date;
  quick: boolean;
  bigRun: number;
  rows: Row[];
  memory: MemoryLine[];
  /** What idle agents cost, without and with their long polls (absent when the scenario did not run). */
  idle: IdleLine[];
  /** bench/history.md: earlier runs' figures, kept by hand and copied in as they are. */
  history?: string;
  wallSeconds: number;
}

const dash = '—';

function ms(x: number): string {
  if (!Number.isFinite(x)) return dash;
  return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0);
}

function ratio(x: number, floor: number): string {
  return Number.isFinite(x) && Number.isFinite(floor) && floor > 0 ? (x / floor).toFixed(1) : dash;
}

function mib(x: number | undefined): string {
  return x === undefined ? dash : x.toFixed(0);
}

function table(header: string[], lines: string[][]): string {
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const align = header.map((_, i) => (i === 0 ? '---' : '---:'));
  return [row(header), row(align), ...lines.map(row)].join('\n');
}

/**
 * The figures table: one line per row, with median/p99 ratios to each floor
 * it is read against. The no-op column divides by the same-bytes no-op for
 * a row read against it (marked "same bytes"), and the workflow-start column
 * by the bare start or by the 100 child starts, whichever the row names.
 */
export function figuresTable(rows: Row[]): string {
  const summaries = new Map(rows.map((r) => [r, summarize(r.samples)] as const));
  const floors = new Map<Floor, Summary>();
  for (const r of rows) if (r.floor) floors.set(r.floor, summaries.get(r)!);
  const ratios = (s: Summary, f: Summary | undefined) => (f ? `${ratio(s.median, f.median)} / ${ratio(s.p99, f.p99)}` : '');
  /** The column's floor for this row: the first of `choices` it is read against. */
  const pick = (r: Row, choices: Floor[]): Floor | undefined => choices.find((c) => r.against.includes(c));
  const column = (r: Row, s: Summary, choices: Floor[], label: (f: Floor) => string = () => ''): string => {
    if (r.floor && choices.includes(r.floor)) return 'floor';
    const f = pick(r, choices);
    if (!f || !floors.get(f)) return '';
    return `${ratios(s, floors.get(f))}${label(f)}`;
  };
  const beyond = (r: Row, s: Summary): string => {
    const temporal = r.against.includes('update') ? floors.get('update') : r.against.includes('query') ? floors.get('query') : undefined;
    const noopFloor = pick(r, ['noopBytes', 'noop']);
    const noop = noopFloor && floors.get(noopFloor);
    return temporal && noop ? ms(s.median - noop.median - temporal.median) : '';
  };
  const lines = rows.map((r) => {
    const s = summaries.get(r)!;
    return [
      r.name,
      String(s.count),
      String(r.errors),
      ms(s.median),
      ms(s.p99),
      ms(s.mean),
      column(r, s, ['noopBytes', 'noop'], (f) => (f === 'noopBytes' ? ' (same bytes)' : '')),
      column(r, s, ['update']),
      column(r, s, ['query']),
      column(r, s, ['start', 'children'], (f) => (f === 'children' ? ' (100 children)' : '')),
      beyond(r, s),
    ];
  });
  return table(
    ['Scenario', 'n', 'errors', 'median ms', 'p99 ms', 'mean ms', '÷ no-op (median / p99)', '÷ Update', '÷ Query', '÷ workflow start', 'median beyond floors, ms'],
    lines,
  );
}

export function memoryTable(memory: MemoryLine[], bigRun: number): string {
  const lines = memory.map((m) => [
    m.process,
    mib(m.before),
    mib(m.after),
    m.before === undefined || m.after === undefined ? dash : (m.after - m.before).toFixed(0),
  ]);
  const n = bigRun.toLocaleString('en-US');
  return table(['Process', `RSS before the ${n}-agent run, MiB`, 'RSS after, MiB', 'Δ MiB'], lines);
}

const percent = (x: number | undefined) => (x === undefined ? dash : `${x.toFixed(1)} %`);

export function idleTable(idle: IdleLine[]): string {
  const lines = idle.map((l) => [
    l.what,
    l.seconds.toFixed(0),
    l.callsPerSecond.toFixed(1),
    l.queriesPerSecond.toFixed(1),
    percent(l.cpu['Temporal dev server']),
    percent(l.cpu.worker),
    percent(l.cpu.gateway),
  ]);
  return table(['Window', 's', 'Temporal calls/s', 'of which Queries/s', 'CPU Temporal', 'CPU worker', 'CPU gateway'], lines);
}

export function failures(rows: Row[]): string {
  const failed = rows.filter((r) => r.errors > 0);
  if (failed.length === 0) return '';
  return ['## Failed calls', '', ...failed.map((r) => `- ${r.name}: ${r.errors} failed; first: ${r.firstError ?? 'unknown'}`), ''].join('\n');
}

/** docs/performance.md: machine facts, how to read the figures, the figures. */
export function renderReport(input: ReportInput): string {
  const { machine } = input;
  const n = input.bigRun.toLocaleString('en-US');
  return [
    '# Performance',
    '',
    'Written by `npm run bench` (bench/run.ts); run it again rather than editing the figures by hand.',
    '',
    `- Mode: ${input.quick ? '**quick** (`--quick`: about a tenth of the calls, a smoke run; p99 is then mostly the maximum)' : 'full'}`,
    `- Date: ${input.date.toISOString()}`,
    `- Machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.totalMemoryGiB.toFixed(1)} GiB memory, ${machine.platform}`,
    `- Node ${machine.node}; the whole bench took ${input.wallSeconds.toFixed(0)} s`,
    '',
    '## How to read this',
    '',
    'Every figure is a latency in milliseconds, timed in the bench process around one call of the official MCP client ' +
      '(or of `@temporalio/client`, through src/temporal, for the Temporal floors), so the client\'s own work is included. Calls are made one after ' +
      'another unless the scenario says otherwise; a short warm-up before each scenario is not counted. p99 is the nearest-rank ' +
      'percentile, a sample that was actually measured; with fewer than 100 samples it is the maximum. The bench process, ' +
      `the gateway, the worker and the Temporal dev server (in memory) all share the machine's ${machine.cpus} CPUs.`,
    '',
    'Floors are measured in the same run. The **no-op** tool is served by the same gateway as beidou (same token ' +
      'check, JSON parsing and fresh MCP server per request) but touches no Temporal: it is what any tool call costs before ' +
      'it does anything. The bare **Update** and **Query** go from the bench process straight to a trivial workflow: one round ' +
      'trip through the Temporal server and the worker with no Dipper logic. The bare **workflow start** starts a workflow ' +
      'that ends in its first workflow task and waits for its result (start, one workflow task, the result\'s long poll): what ' +
      'a call that runs a short workflow pays before its workflow does anything. The **100 child starts** are one workflow ' +
      'task that starts 100 trivial children, timed from the parent\'s start until it has heard all of them started; ' +
      `create_team of 100 members is read against it. The **same-bytes no-op** answers as many bytes, in as many rows, as ` +
      `list_peers over the ${n}-agent run, each call made right after a list_peers call: list_peers there is read against it ` +
      'rather than the plain no-op, so what is left is the Query and the rows\' making, not their size on the wire. Two rows ' +
      'marked "(history)" are the same floors read from the workflows\' histories (the server\'s event times) instead of the ' +
      'caller\'s clock. A ratio divides a scenario\'s median (and p99) by ' +
      'the same figure of a floor. A beidou tool that makes one Update costs at least the no-op plus an Update, so its ratio to ' +
      'either floor is above 1 by construction; the last column, the median minus the no-op and Temporal floor medians, is the ' +
      'time the floors do not explain: Dipper\'s own workflow work, extra round trips (retries, signals, child starts) and ' +
      'payload size. Floors and scenarios are measured at different moments, so a few milliseconds either side of zero is ' +
      'noise and means the floors explain the call. A large figure there points at a bottleneck worth looking at; a large p99 ratio with a small median ratio ' +
      'points at queueing or pauses (GC, workflow cache, history compaction) rather than steady cost.',
    '',
    '## Latency',
    '',
    figuresTable(input.rows),
    '',
    `The fan-in rows come from bursts in which 50 agents each send one message to the same recipient at the same moment; ` +
      '"each message" is the latency of every message of every timed burst, "whole burst" the wall time from the first send to ' +
      'the last answer. Before each such burst the same 50 agents make one no-op call each at once: the "no-op calls at once" ' +
      'rows are what 50 concurrent requests cost the gateway and the client on this machine before any Temporal work, the floor ' +
      `to read the fan-in burst against. The create_team row is the setup of the ${n}-agent run, shown because it is the ` +
      'largest single call.',
    '',
    '## Issue 40\'s targets',
    '',
    targetsTable(input.rows),
    '',
    'Each target divides this run\'s median by the floors it names, measured in the same run; the f4c909b column is the ' +
      'issue\'s own table (its floors: no-op 2.02, Update 5.88, Query 4.10 ms, on a faster hour of the same kind of machine), so ' +
      'compare ratios, not milliseconds. ask_user\'s target leaves out the answerer\'s own answer_question call (timed in the ' +
      'same round trips). Where a target is not met, "What keeps the misses" in the earlier measurements below names each ' +
      'remaining step, what it costs, and the spec sentence or replay evidence that keeps it.',
    '',
    '## Idle agents',
    '',
    input.idle.length > 0 ? idleTable(input.idle) : 'Not measured in this run.',
    '',
    `The members of the ${n}-agent run, doing nothing: first with nobody polling, then with each holding its runtime's long ` +
      'poll (`GET /api/runtime/inbox`, asked again as soon as it is answered), measured over windows of the same length. ' +
      'Temporal calls are every request the Temporal frontend served (its `service_requests` counter: Queries, workers\' ' +
      'task polls, the gateway\'s revocation refreshes), CPU is user plus system time from /proc in percent of one core. ' +
      'The difference between the two lines is what idle long polls cost.',
    '',
    '## Memory',
    '',
    memoryTable(input.memory, input.bigRun),
    '',
    `Resident set size (VmRSS from /proc) of each process just before the ${n}-agent run was built and just after its ` +
      'list_peers calls. Earlier scenarios\' runs are still alive in both figures; the difference is what the large run added.',
    '',
    failures(input.rows),
    input.history ?? '',
  ].join('\n');
}
