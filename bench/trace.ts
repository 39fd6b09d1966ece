/**
 * Where the time of one tool call goes: `npx tsx bench/trace.ts [op ...] [--full] [--tail MS]`.
 *
 * Starts the bench's stack (bench/stack.ts) with a recording gRPC proxy
 * (bench/grpcTap.ts) between each of the worker and the gateway and the
 * Temporal server, makes one untraced call of each operation first (so
 * caches, teams and folders exist), then one traced call, and prints its
 * timeline from the MCP request to its answer and a little after: every
 * Temporal RPC the gateway made and the worker's RPCs on the same
 * workflows (polls answered, tasks completed), every history event of
 * every workflow of the run in that window (DipperRunId, plus the run's
 * own and the floors' workflows), inbox wake rows (events.db) and the
 * runtime long polls the tracer itself holds. Times are milliseconds from
 * the moment the call was sent; the server's event times and this
 * process's clock are the same machine's clock.
 *
 * Ops: spawn_agent, declare_plan, remove_plan, ask_user (answered one hop
 * up), spawn_then_read, declare_then_read and declare_then_remove (a call
 * right after another's answer; TRACE_ROUNDS repeats declare_then_remove's pair),
 * create_team_10, create_team_100, task_create, send_message, and the
 * floors noop, update, start (a bare workflow start and result), children
 * (100 child starts in one workflow task). Default: the first seven.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { temporalAddress } from '../src/config';
import { Temporal } from '../src/temporal';
import { projectRoot } from '../src/devstack/dipperProcess';
import * as agentMessages from '../workflows/agent/messages';
import { echoUpdate, echoWorkflow, stopSignal } from '../workflows/bench/echoWorkflow';
import * as questionMessages from '../workflows/question/messages';
import * as runMessages from '../workflows/run/messages';
import { Agents, type BenchAgent } from './client';
import { GrpcTap, type Rpc } from './grpcTap';
import { eventMs, eventName, type HistoryEvent } from './historyEvents';
import { startStack, Teardown, type Stack } from './stack';

const now = () => performance.timeOrigin + performance.now();

/** Update, Query and Signal names, found in an RPC's bytes to say what it was. */
const MESSAGE_NAMES = [...new Set(
  [agentMessages, runMessages, questionMessages]
    .flatMap((mod) => Object.values(mod as Record<string, unknown>))
    .filter((d): d is { name: string; type: string } => typeof d === 'object' && d !== null && 'type' in d && 'name' in d && typeof (d as { name: unknown }).name === 'string')
    .map((d) => d.name),
)];

interface Env {
  stack: Stack;
  temporal: Temporal;
  agents: Agents;
  taps: GrpcTap[];
  full: boolean;
  tailMs: number;
}

/** Something that happened outside Temporal's histories, seen from this process (a long poll, a side call). */
interface Mark {
  at: number;
  what: string;
}

/** One traced call: what to set up untraced, the call itself, and which workflows to read. */
interface Traced {
  /** What the timeline is of. */
  title: string;
  /** The run whose workflows are read (DipperRunId), if any. */
  runId?: string;
  /** Workflow ids to read besides the run's (floors). */
  workflowIds?: string[];
  /** Short names for workflow ids in the timeline. */
  labels: Map<string, string>;
  /** Marks made by helpers during the call (long polls, answers). */
  marks: Mark[];
  call: () => Promise<unknown>;
  /** Stops helpers (long polls) after the tail. */
  after?: () => Promise<void>;
}

const OPS = ['spawn_agent', 'declare_plan', 'remove_plan', 'ask_user', 'spawn_then_read', 'declare_then_read', 'declare_then_remove', 'create_team_10', 'create_team_100', 'task_create', 'send_message', 'noop', 'update', 'start', 'children'];
const DEFAULT_OPS = OPS.slice(0, 7);

async function newRun(env: Env, task: string): Promise<{ runId: string; root: BenchAgent; rootId: string; token: string }> {
  const res = await env.agents.operator.request('POST', '/runs', { task, limits: { idle_watchdog_seconds: 0 } });
  if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
  const root = await env.agents.connect('beidou', res.json.root.agent_id, res.json.root.agent_token);
  return { runId: res.json.run_id, root, rootId: res.json.root.agent_id, token: res.json.root.agent_token };
}

/** A new run whose root has declared a plan of these task ids (and is labelled `root` in the timeline). */
async function planned(env: Env, op: string, labels: Map<string, string>, ids: string[]) {
  const run = await newRun(env, `Trace ${op}.`);
  labels.set(run.rootId, 'root');
  const tasks = ids.map((id) => ({ id, role: `engineer-${id}`, skill: 'worker', task: `Do ${id}.` }));
  await run.root.call('declare_plan', { tasks });
  return { run, tasks };
}

const settle = (ms = 1200) => new Promise((r) => setTimeout(r, ms));

/** Prepares one op and returns its traced call; the preparation (and its own warm-up call) is not traced. */
async function prepare(env: Env, op: string): Promise<Traced> {
  const marks: Mark[] = [];
  const labels = new Map<string, string>();
  switch (op) {
    case 'spawn_agent': {
      const { run } = await planned(env, op, labels, ['w', 't']);
      // The first spawn makes the team and its folder: a warm-up.
      await run.root.call('spawn_agent', { task_id: 'w' });
      return { title: 'spawn_agent (the leader\'s second spawn; its team exists)', runId: run.runId, labels, marks, call: () => run.root.call('spawn_agent', { task_id: 't' }) };
    }
    case 'spawn_then_read': {
      const { run } = await planned(env, op, labels, ['w', 't']);
      await run.root.call('spawn_agent', { task_id: 'w' });
      const call = async () => {
        await run.root.call('spawn_agent', { task_id: 't' });
        marks.push({ at: now(), what: 'spawn_agent answered; list_ready sent' });
        return run.root.call('list_ready', {});
      };
      return { title: "spawn_agent, then list_ready at once (a read right after a spawn's answer, its step still ending)", runId: run.runId, labels, marks, call };
    }
    case 'declare_plan':
    case 'remove_plan': {
      const { run, tasks } = await planned(env, op, labels, ['a', 'b', 'c']);
      await run.root.call('remove_plan', {});
      if (op === 'remove_plan') await run.root.call('declare_plan', { tasks });
      return {
        title: op === 'declare_plan' ? 'declare_plan, 3 tasks' : 'remove_plan (of a 3-task plan)',
        runId: run.runId,
        labels,
        marks,
        call: () => (op === 'declare_plan' ? run.root.call('declare_plan', { tasks }) : run.root.call('remove_plan', {})),
      };
    }
    case 'declare_then_read': {
      const { run, tasks } = await planned(env, op, labels, ['a', 'b', 'c']);
      await run.root.call('remove_plan', {});
      const call = async () => {
        await run.root.call('declare_plan', { tasks });
        marks.push({ at: now(), what: 'declare_plan answered; list_ready sent' });
        return run.root.call('list_ready', {});
      };
      return { title: 'declare_plan, then list_ready at once', runId: run.runId, labels, marks, call };
    }
    case 'declare_then_remove': {
      const { run, tasks } = await planned(env, op, labels, ['a', 'b', 'c']);
      await run.root.call('remove_plan', {});
      const rounds = Number(process.env.TRACE_ROUNDS ?? 1);
      const call = async () => {
        for (let i = 0; i < rounds; i++) {
          await run.root.call('declare_plan', { tasks });
          marks.push({ at: now(), what: 'declare_plan answered; remove_plan sent' });
          await run.root.call('remove_plan', {});
          marks.push({ at: now(), what: 'remove_plan answered' });
        }
      };
      return { title: `declare_plan, then remove_plan at once, ${rounds} time(s) (as the bench's plan rows)`, runId: run.runId, labels, marks, call };
    }
    case 'create_team_10':
    case 'create_team_100': {
      const size = op === 'create_team_10' ? 10 : 100;
      const run = await newRun(env, `Trace create_team of ${size}.`);
      labels.set(run.rootId, 'root');
      const roles = (team: string) => Array.from({ length: size }, (_, i) => ({ role: `${team}-${i}`, skill: 'worker', description: `Member ${i}.` }));
      // A first team of one: the leader's first create_team (its caches) is not the one traced.
      await run.root.call('create_team', { name: 'warm', task: 'Warm-up.', roles: [{ role: 'warm-0', skill: 'worker', description: 'Warm-up.' }] });
      return { title: `create_team, ${size} members (the leader's second team)`, runId: run.runId, labels, marks, call: () => run.root.call('create_team', { name: 'traced', task: 'Traced team.', roles: roles('traced') }) };
    }
    case 'send_message': {
      const run = await newRun(env, 'Trace send_message.');
      labels.set(run.rootId, 'root');
      const out = await run.root.call<{ members: { agent_id: string }[] }>('create_team', { name: 'pair', task: 'Pair.', roles: [{ role: 'peer', skill: 'worker', description: 'Peer.' }] });
      const to = out.members[0].agent_id;
      labels.set(to, 'peer');
      await run.root.call('send_message', { to, content: 'Warm-up.' });
      return { title: 'send_message, 1 → 1', runId: run.runId, labels, marks, call: () => run.root.call('send_message', { to, content: 'Traced message.' }) };
    }
    case 'task_create': {
      const run = await newRun(env, 'Trace task_create.');
      labels.set(run.rootId, 'root');
      const tasks = await env.agents.connect('agentteam', run.rootId, run.token);
      await tasks.call('task_create', { channel: run.runId, tasks: [{ title: 'Warm-up' }] });
      return { title: 'task_create, one task', runId: run.runId, labels, marks, call: () => tasks.call('task_create', { channel: run.runId, tasks: [{ title: 'Traced' }] }) };
    }
    case 'ask_user':
      return prepareAsk(env, labels, marks);
    case 'noop': {
      const run = await newRun(env, 'Trace the no-op.');
      const noop = await env.agents.connect('bench', run.rootId, run.token);
      await noop.call('noop');
      return { title: 'no-op tool (floor)', labels, marks, call: () => noop.call('noop') };
    }
    case 'update': {
      const workflowId = `bench-echo-${randomUUID()}`;
      const handle = await env.temporal.start(echoWorkflow, { taskQueue: env.stack.config.temporal.taskQueue, workflowId });
      await handle.update(echoUpdate, [0]);
      labels.set(workflowId, 'echo');
      return {
        title: 'bare Update (floor; made by this process, so no gateway RPCs show)',
        workflowIds: [workflowId],
        labels,
        marks,
        call: () => handle.update(echoUpdate, [1]),
        after: () => handle.signal(stopSignal),
      };
    }
    case 'start':
    case 'children': {
      const workflowId = `bench-${op}-${randomUUID()}`;
      labels.set(workflowId, op === 'start' ? 'trivial' : 'parent');
      const args = [op === 'start' ? { returnAtOnce: true } : { children: 100 }] as const;
      await env.temporal.execute(echoWorkflow, { taskQueue: env.stack.config.temporal.taskQueue, workflowId: `${workflowId}-warm`, args: [...args] });
      const ids = op === 'children' ? [workflowId, ...Array.from({ length: 100 }, (_, i) => `${workflowId}/child-${i}`)] : [workflowId];
      return {
        title: op === 'start' ? 'bare workflow start and result (floor; by this process)' : '100 child starts in one workflow task (floor; by this process)',
        workflowIds: ids,
        labels,
        marks,
        call: () => env.temporal.execute(echoWorkflow, { taskQueue: env.stack.config.temporal.taskQueue, workflowId, args: [...args] }),
      };
    }
    default:
      throw new Error(`unknown op ${op}; one of ${OPS.join(', ')}`);
  }
}

/**
 * ask_user from the root's only member, answered by the root: the root's
 * runtime is this process, reading its inbox by the runtime long poll and
 * answering the [INBOX QUESTION] with answer_question, as the bench does.
 */
async function prepareAsk(env: Env, labels: Map<string, string>, marks: Mark[]): Promise<Traced> {
  const run = await newRun(env, 'Trace ask_user.');
  labels.set(run.rootId, 'root');
  const out = await run.root.call<{ members: { agent_id: string }[] }>('create_team', { name: 'asker', task: 'Ask.', roles: [{ role: 'asker', skill: 'worker', description: 'Asks.' }] });
  const askerId = out.members[0].agent_id;
  labels.set(askerId, 'asker');
  const launch = await env.agents.operator.launch(run.runId, askerId);
  const asker = await env.agents.connect('beidou', askerId, launch.token);
  const stop = new AbortController();
  const holder = (async () => {
    let cursor = 0;
    while (!stop.signal.aborted) {
      const sent = now();
      let body: { messages: { content: string }[]; next_cursor: number };
      try {
        const res = await fetch(`${env.stack.gatewayUrl}/api/runtime/inbox?cursor=${cursor}&wait_ms=10000`, { headers: { authorization: `Bearer ${run.token}` }, signal: stop.signal });
        body = (await res.json()) as typeof body;
      } catch {
        if (stop.signal.aborted) return;
        continue;
      }
      const got = now();
      marks.push({ at: sent, what: `root's runtime long poll sent (cursor ${cursor})` });
      marks.push({ at: got, what: `root's runtime long poll answered: ${body.messages?.length ?? 0} message(s), held ${(got - sent).toFixed(1)} ms` });
      cursor = body.next_cursor ?? cursor;
      for (const m of body.messages ?? []) {
        const qid = /^\[INBOX QUESTION\]\nqid: (q_[A-Za-z0-9_-]+)/.exec(m.content)?.[1];
        if (!qid) continue;
        labels.set(qid, 'question');
        const a = now();
        marks.push({ at: a, what: `root calls answer_question ${qid}` });
        await run.root.call('answer_question', { qid, answers: [{ selected_labels: ['Yes'], text: null }], reason: 'Trace.' });
        marks.push({ at: now(), what: `answer_question answered (${(now() - a).toFixed(1)} ms)` });
      }
    }
  })();
  const ask = (i: number) =>
    asker.call('ask_user', { questions: [{ question: `Proceed with step ${i}?`, header: 'Go', multiSelect: false, options: [{ label: 'Yes', description: '' }, { label: 'No', description: '' }] }] });
  await ask(0);
  // The warm-up's marks are not this call's.
  await settle(300);
  marks.splice(0);
  return {
    title: 'ask_user, answered 1 hop up (the asker\'s leader, the root, answers from its runtime long poll)',
    runId: run.runId,
    labels,
    marks,
    call: () => ask(1),
    after: async () => {
      stop.abort();
      await holder.catch(() => undefined);
    },
  };
}

/** Every workflow of the run (visibility), the run's own, and any named. */
async function workflowsOf(env: Env, t: Traced): Promise<string[]> {
  const ids = new Set<string>(t.workflowIds ?? []);
  if (t.runId) {
    ids.add(`run/${t.runId}`);
    for await (const wf of env.temporal.list(`DipperRunId = "${t.runId}"`)) ids.add(wf.workflowId);
  }
  return [...ids];
}

function label(id: string, labels: Map<string, string>): string {
  const last = id.split('/').pop() ?? id;
  if (/^run\/run_[A-Za-z0-9]+$/.test(id)) return 'run';
  const named = labels.get(last) ?? labels.get(id);
  if (id.includes('/task/')) return `taskOp ${last.slice(0, 10)}`;
  if (id.includes('/question/')) return `question`;
  if (id.startsWith('bench-') && id.includes('/child-')) return `child-${id.split('/child-')[1]}`;
  return named ?? last;
}

/** The details worth a word for an event: activity, signal, update, child, timer. */
function detail(e: HistoryEvent, scheduled: Map<string, string>): string {
  const a = e as unknown as Record<string, Record<string, unknown> | undefined>;
  const sched = (id: unknown) => scheduled.get(String(id)) ?? '';
  if (a.activityTaskScheduledEventAttributes) return String((a.activityTaskScheduledEventAttributes.activityType as { name?: string })?.name ?? '');
  if (a.activityTaskStartedEventAttributes) return sched(a.activityTaskStartedEventAttributes.scheduledEventId);
  if (a.activityTaskCompletedEventAttributes) return sched(a.activityTaskCompletedEventAttributes.scheduledEventId);
  if (a.activityTaskFailedEventAttributes) return sched(a.activityTaskFailedEventAttributes.scheduledEventId);
  if (a.workflowExecutionSignaledEventAttributes) return String(a.workflowExecutionSignaledEventAttributes.signalName ?? '');
  if (a.signalExternalWorkflowExecutionInitiatedEventAttributes) {
    const s = a.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return `${String(s.signalName)} → ${(s.workflowExecution as { workflowId?: string })?.workflowId ?? ''}`;
  }
  if (a.externalWorkflowExecutionSignaledEventAttributes) return `→ ${(a.externalWorkflowExecutionSignaledEventAttributes.workflowExecution as { workflowId?: string })?.workflowId ?? ''}`;
  if (a.workflowExecutionUpdateAcceptedEventAttributes) return String(((a.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest as { input?: { name?: string } })?.input?.name) ?? '');
  if (a.workflowExecutionUpdateAdmittedEventAttributes) return String(((a.workflowExecutionUpdateAdmittedEventAttributes.request as { input?: { name?: string } })?.input?.name) ?? '');
  if (a.startChildWorkflowExecutionInitiatedEventAttributes) return String(a.startChildWorkflowExecutionInitiatedEventAttributes.workflowId ?? '');
  if (a.childWorkflowExecutionStartedEventAttributes) return String((a.childWorkflowExecutionStartedEventAttributes.workflowExecution as { workflowId?: string })?.workflowId ?? '');
  if (a.timerStartedEventAttributes) {
    const t = a.timerStartedEventAttributes.startToFireTimeout as { seconds?: unknown; nanos?: number } | undefined;
    return `${(Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6).toFixed(0)} ms`;
  }
  if (a.workflowTaskFailedEventAttributes) return String(a.workflowTaskFailedEventAttributes.cause ?? '');
  if (a.markerRecordedEventAttributes) return String(a.markerRecordedEventAttributes.markerName ?? '');
  return '';
}

interface Line {
  at: number;
  who: string;
  what: string;
  /** Member workflows of a large team are summed up unless --full. */
  member?: boolean;
}

/** The workflow a worker RPC was about: a poll's answer names it, a completion's task token does. */
function rpcWorkflow(r: Rpc): string | undefined {
  return [...r.responseIds, ...r.requestIds].find((id) => id.startsWith('run/') || id.startsWith('bench-'));
}

function rel(at: number, t0: number): string {
  return `+${(at - t0).toFixed(1)}`.padStart(9);
}

async function trace(env: Env, op: string): Promise<void> {
  process.stderr.write(`trace: preparing ${op}\n`);
  const t = await prepare(env, op);
  await settle();
  for (const tap of env.taps) tap.clear();
  const t0 = now();
  let failure: unknown;
  await t.call().catch((err: unknown) => (failure = err));
  const t1 = now();
  await settle(env.tailMs);
  await t.after?.();
  const tEnd = t1 + env.tailMs;
  const rpcs = env.taps.flatMap((tap) => tap.rpcs.map((r) => ({ ...r })));

  const ids = await workflowsOf(env, t);
  const lines: Line[] = [];
  const members = new Set<string>();
  const memberSummary: { id: string; initiated?: number; started?: number; firstTaskDone?: number }[] = [];
  const perWorkflow: string[] = [];
  for (const id of ids) {
    const history = await env.temporal.handle(id).fetchHistory().catch(() => undefined);
    const events = history?.events ?? [];
    const who = label(id, t.labels);
    const scheduled = new Map<string, string>();
    for (const e of events) {
      const d = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (d) scheduled.set(String(e.eventId), d);
    }
    const inWindow = events.filter((e) => eventMs(e) >= t0 - 5 && eventMs(e) <= tEnd);
    if (inWindow.length === 0) continue;
    const startedHere = events.length > 0 && eventMs(events[0]) >= t0 - 5;
    const isMember = startedHere && (t.runId ? id.includes('/agent/') : id.includes('/child-'));
    if (isMember) members.add(id);
    for (const e of inWindow) lines.push({ at: eventMs(e), who, what: `${eventName(e)} ${detail(e, scheduled)}`.trim(), member: isMember });
    // Workflow tasks in the window: queue time (scheduled → started) and run time (started → completed).
    const tasks: string[] = [];
    let scheduledAt: number | undefined;
    let startedAt: number | undefined;
    for (const e of inWindow) {
      const n = eventName(e);
      if (n === 'WORKFLOW_TASK_SCHEDULED') scheduledAt = eventMs(e);
      else if (n === 'WORKFLOW_TASK_STARTED') startedAt = eventMs(e);
      else if (n === 'WORKFLOW_TASK_COMPLETED' || n === 'WORKFLOW_TASK_FAILED' || n === 'WORKFLOW_TASK_TIMED_OUT') {
        const queued = scheduledAt !== undefined && startedAt !== undefined ? (startedAt - scheduledAt).toFixed(1) : '?';
        const ran = startedAt !== undefined ? (eventMs(e) - startedAt).toFixed(1) : '?';
        tasks.push(`[${rel(startedAt ?? eventMs(e), t0).trim()} queued ${queued} ran ${ran}${n === 'WORKFLOW_TASK_COMPLETED' ? '' : ` ${n}`}]`);
        scheduledAt = startedAt = undefined;
      }
    }
    if (isMember) {
      const find = (name: string) => events.find((e) => eventName(e) === name);
      const done = find('WORKFLOW_TASK_COMPLETED');
      memberSummary.push({ id, started: find('WORKFLOW_EXECUTION_STARTED') && eventMs(find('WORKFLOW_EXECUTION_STARTED')!), firstTaskDone: done && eventMs(done) });
    }
    if (!isMember || env.full || memberSummary.length <= 3) perWorkflow.push(`  ${who.padEnd(14)} ${inWindow.length} events; workflow tasks ${tasks.join(' ')}`);
  }

  // The gateway's RPCs on this run (or on the floors' workflows): each with its duration.
  const mine = (id: string) => (t.runId ? id.includes(t.runId) : (t.workflowIds ?? []).some((w) => id.startsWith(w)));
  const otherCounts = new Map<string, number>();
  for (const r of rpcs) {
    const at = r.answeredAt ?? r.sentAt;
    const wf = rpcWorkflow(r);
    const related = wf !== undefined && mine(wf);
    if (r.who === 'gateway') {
      if (!related || r.sentAt < t0 - 5 || r.sentAt > tEnd) {
        if (r.sentAt >= t0 && r.sentAt <= t1) otherCounts.set(`gateway ${r.method}`, (otherCounts.get(`gateway ${r.method}`) ?? 0) + 1);
        continue;
      }
      const took = r.endedAt !== undefined ? `${(r.endedAt - r.sentAt).toFixed(1)} ms` : 'open';
      const names = r.names.length > 0 ? ` [${r.names.join(',')}]` : '';
      lines.push({ at: r.sentAt, who: 'gateway→T', what: `${r.method}${names} ${label(wf!, t.labels)} … answered ${r.endedAt !== undefined ? rel(r.endedAt, t0).trim() : '—'} (${took}${r.status && r.status !== '0' ? `, grpc-status ${r.status}` : ''})` });
    } else {
      if (!related) {
        if (at >= t0 && at <= t1 && !r.method.startsWith('Poll')) otherCounts.set(`worker ${r.method}`, (otherCounts.get(`worker ${r.method}`) ?? 0) + 1);
        continue;
      }
      const isMember = [...members].some((m) => wf === m);
      if (r.method.startsWith('Poll')) {
        if (r.answeredAt === undefined || r.answeredAt < t0 - 5 || r.answeredAt > tEnd) continue;
        lines.push({ at: r.endedAt ?? r.answeredAt, who: 'T→worker', what: `${r.method} answered: a task of ${label(wf!, t.labels)} (poll held ${((r.endedAt ?? r.answeredAt) - r.sentAt).toFixed(0)} ms)`, member: isMember });
      } else {
        if (r.sentAt < t0 - 5 || r.sentAt > tEnd) continue;
        lines.push({ at: r.sentAt, who: 'worker→T', what: `${r.method} ${label(wf!, t.labels)} (${r.endedAt !== undefined ? (r.endedAt - r.sentAt).toFixed(1) : '?'} ms)`, member: isMember });
      }
    }
  }

  // Inbox wake rows written in the window (the gateway reads the table every 100 ms).
  for (const w of wakesIn(env.stack.dataDir, t0 - 5, tEnd)) {
    const [, key] = /^[^/]+\/(.+)$/.exec(w.key) ?? [];
    lines.push({ at: w.ts, who: 'wake row', what: `inbox_wakes ${label(key ?? w.key, t.labels)} (from ${w.origin.split('-')[0]}; ms resolution)` });
  }
  for (const m of t.marks) if (m.at >= t0 - 5 && m.at <= tEnd) lines.push({ at: m.at, who: 'runtime', what: m.what });
  lines.push({ at: t0, who: 'client', what: `MCP call sent` });
  lines.push({ at: t1, who: 'client', what: failure ? `call FAILED: ${failure instanceof Error ? failure.message : String(failure)}` : 'answer received' });
  lines.sort((a, b) => a.at - b.at);

  const out: string[] = [];
  out.push(`\n=== ${t.title}: answered in ${(t1 - t0).toFixed(1)} ms; window shown until +${(tEnd - t0).toFixed(0)} ms ===`);
  const shown = env.full || members.size <= 10 ? lines : lines.filter((l) => !l.member);
  let answered = false;
  for (const l of shown) {
    if (!answered && l.at > t1) {
      out.push('          ---- after the answer ----');
      answered = true;
    }
    out.push(`${rel(l.at, t0)}  ${l.who.padEnd(14)} ${l.what}`);
  }
  if (shown.length < lines.length) out.push(`  (${lines.length - shown.length} lines of ${members.size} new member workflows left out; --full shows them)`);
  if (memberSummary.length > 0) {
    const q = (xs: number[]) => {
      const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
      return s.length === 0 ? '—' : `first ${rel(s[0], t0).trim()}, median ${rel(s[Math.floor(s.length / 2)], t0).trim()}, last ${rel(s[s.length - 1], t0).trim()}`;
    };
    out.push(`\n  ${memberSummary.length} new workflows: started ${q(memberSummary.map((m) => m.started ?? NaN))}; first task completed ${q(memberSummary.map((m) => m.firstTaskDone ?? NaN))}`);
  }
  out.push('\n  Workflow tasks in the window (start time, ms queued scheduled→started, ms run started→completed):');
  out.push(...perWorkflow);
  const gw = rpcs.filter((r) => r.who === 'gateway' && r.sentAt >= t0 - 5 && r.sentAt <= t1);
  out.push(`\n  Gateway → Temporal during the call: ${gw.length} RPCs (${summarize(gw.map((r) => r.method))})`);
  if (otherCounts.size > 0) out.push(`  Unrelated RPCs during the call: ${[...otherCounts].map(([k, v]) => `${k} ×${v}`).join(', ')}`);
  out.push(`\n  Longest quiet stretches before the answer (nothing recorded by any process):`);
  const before = lines.filter((l) => l.at >= t0 && l.at <= t1);
  const gaps = before.slice(1).map((l, i) => ({ from: before[i], to: l, ms: l.at - before[i].at })).sort((a, b) => b.ms - a.ms).slice(0, 6);
  for (const g of gaps) out.push(`    ${g.ms.toFixed(1).padStart(7)} ms  from ${rel(g.from.at, t0).trim()} ${g.from.who}: ${g.from.what.slice(0, 70)}\n               to   ${rel(g.to.at, t0).trim()} ${g.to.who}: ${g.to.what.slice(0, 70)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

function summarize(names: string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([k, v]) => `${k} ×${v}`).join(', ') || 'none';
}

function wakesIn(dataDir: string, from: number, to: number): { key: string; origin: string; ts: number }[] {
  const file = path.join(dataDir, 'events.db');
  if (!fs.existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT key, origin, ts FROM inbox_wakes WHERE ts >= ? AND ts <= ? ORDER BY seq').all(Math.floor(from), Math.ceil(to)) as { key: string; origin: string; ts: number }[];
  } catch {
    return [];
  } finally {
    db.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const full = argv.includes('--full');
  const tailAt = argv.indexOf('--tail');
  const tailMs = tailAt >= 0 ? Number(argv[tailAt + 1]) : 700;
  const ops = argv.filter((a, i) => !a.startsWith('--') && !(tailAt >= 0 && i === tailAt + 1));
  const unknown = ops.filter((o) => o !== 'all' && !OPS.includes(o));
  if (unknown.length > 0 || !Number.isFinite(tailMs)) {
    process.stderr.write(`usage: npx tsx bench/trace.ts [${OPS.join('|')}|all ...] [--full] [--tail MS]\n`);
    return 2;
  }
  const chosen = ops.length === 0 ? DEFAULT_OPS : ops.includes('all') ? OPS : ops;
  const teardown = new Teardown();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void teardown.run().finally(() => process.exit(130)));
  const dataRoot = path.join(projectRoot, '.bench-data', `trace-${process.pid}`);
  const taps: GrpcTap[] = [];
  try {
    const stack = await startStack(dataRoot, teardown, (m) => process.stderr.write(`trace: ${m}\n`), {
      temporalFor: async (server) => {
        const worker = new GrpcTap('worker', server, MESSAGE_NAMES);
        const gateway = new GrpcTap('gateway', server, MESSAGE_NAMES);
        taps.push(worker, gateway);
        teardown.add('the gRPC taps', async () => void (await Promise.all(taps.map((t) => t.close()))));
        return { worker: await worker.listen(0), gateway: await gateway.listen(0) };
      },
    });
    const temporal = await Temporal.connect({ address: temporalAddress(stack.config), namespace: stack.config.temporal.namespace });
    teardown.add('the Temporal client', () => temporal.close());
    const agents = new Agents(stack.gatewayUrl, stack.operatorToken);
    teardown.add("the agents' MCP clients", () => agents.closeAll());
    const env: Env = { stack, temporal, agents, taps, full, tailMs };
    process.stdout.write(`Traced through gRPC taps (worker and gateway reach Temporal through this process: a fraction of a ms added per RPC).\n`);
    for (const op of chosen) {
      try {
        await trace(env, op);
      } catch (err) {
        process.stdout.write(`\n=== ${op}: could not be traced: ${err instanceof Error ? err.stack : String(err)}\n`);
      }
    }
  } finally {
    await teardown.run();
  }
  fs.rmSync(dataRoot, { recursive: true, force: true });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`trace failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
