import os from 'node:os';
import { latencyOf, workflowTaskMs, type LatencySummary } from './taskLatency';
import type { History, Temporal, WorkflowSummary as WorkflowExecutionInfo } from '../temporal';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { mapOrdered } from './ordered';
import { createLogger } from '../log';
import { speedUpWorkflowThreads, type Watch } from '../worker/workflowThreads';
import { installQuietRuntime } from './quietRuntime';

export interface ReplayAllOptions {
  /** The namespace to check. */
  temporal: Temporal;
  /** A prebuilt workflow bundle (src/devstack/bundle.ts): the code every history must still replay with. */
  bundlePath: string;
  /** A visibility query narrowing the list; every workflow of the namespace when absent. */
  query?: string;
  /** Workflows not to replay (broken on purpose, or of a type the bundle does not hold), with a reason. */
  skip?: (wf: WorkflowExecutionInfo) => string | undefined;
  /** History fetches in flight at once. */
  concurrency?: number;
  /**
   * Replay workers side by side, each with its own worker thread, taking
   * the next fetched history as they free up; 1 when absent.
   */
  replayers?: number;
  /**
   * Whether this run was already replayed well at this many events (by an
   * earlier pass): then it is not replayed again, and counts as reused. A
   * history only grows, so the same run at the same length is the same history.
   */
  replayedBefore?: (runId: string, events: number) => boolean;
  /** Each replay's verdict as it comes, with the history's length. */
  onReplayed?: (outcome: ReplayOutcome) => void;
}

/** What replaying one history said. */
export interface ReplayOutcome {
  workflowId: string;
  runId: string;
  /** Events in the history replayed. */
  events: number;
  verdict: 'ok' | 'nondeterministic' | 'failed';
  /** The replayer's first line, when not ok. */
  message?: string;
  /** Workflow tasks in the history that a worker took and did not finish in time. */
  taskTimeouts: number;
}

export interface ReplayProblem {
  workflowId: string;
  runId: string;
  /** The first line of the replayer's message, for a person to start from. */
  message: string;
}

export interface ReplayReport {
  /** Executions the visibility list returned (every run of a continued-as-new chain counts). */
  listed: number;
  replayed: number;
  /** Of `replayed`, histories not replayed again because an earlier pass replayed them well at the same length. */
  reused: number;
  skipped: { workflowId: string; runId: string; reason: string }[];
  nondeterministic: ReplayProblem[];
  /** Replays that failed otherwise, and histories that could not be fetched. */
  failed: ReplayProblem[];
  /** Running workflows whose workflow task keeps failing: they make no progress until someone repairs them. */
  stuck: ReplayProblem[];
  /**
   * Workflow tasks a worker took and did not finish within the task
   * timeout: killed holding them, or too busy. A fresh worker with more
   * tasks than it can run in time shows here.
   */
  taskTimeouts: number;
  /** How long the workflow tasks workers finished took, started to completed: how close they came to the timeout. */
  taskLatency: LatencySummary;
  /** Events in the longest history replayed. */
  largestHistory: number;
  /** That history's workflow run, for a closer look (src/ops/replayCost.ts). */
  largest?: { workflowId: string; runId: string };
  ms: number;
  /** Of `ms`, the time the replayer sat waiting for histories to arrive (the rest: listing, and replaying). */
  waitedMs: number;
}

/**
 * Replayers for a check that has the machine to itself (the end of a test
 * run, the soak's end): two use two cores 1.45 times as fast as one (530
 * histories in 21.5 s against 31.1 s); a third gains little (20.1 s).
 */
export function replayersForMachine(): number {
  return Math.min(2, os.availableParallelism());
}

/**
 * For connections that fetch histories: grpc-js takes at most 4 MB per
 * message, and one page of a long history with large inputs is more (the
 * worker's own client, SDK core, takes 128 MB).
 */
export const HISTORY_CHANNEL_ARGS = { 'grpc.max_receive_message_length': 128 * 1024 * 1024 };

/**
 * For a process that replays and runs no worker (the end of a test run,
 * `dipper doctor`): the SDK's own log silenced (the report holds every
 * verdict), and replay threads that load the worker's preload, so they run
 * activations as the worker does, in about 40% less time. A replay stuck
 * for a minute ends the process rather than holding it until a deadline.
 * Stop the returned watch when the replays are done.
 */
export function replayingProcess(name: string): Watch {
  installQuietRuntime();
  return speedUpWorkflowThreads(createLogger({ logLevel: 'error' }, name), 60_000);
}

/**
 * The options of every replay Dipper makes: the workflow code runs in a
 * worker thread, as in a worker. The SDK's replayer otherwise runs it on the
 * calling thread (its debug mode) and installs there, for good, a promise
 * hook that compiles a function for every promise the process creates from
 * then on: after one replay, every promise of the process (the in-band
 * test run's, `dipper doctor`'s) cost that. The CI run's end-of-run
 * replay took 400 ms a history, and a file that takes 9 s alone took 42 s.
 */
export function replayOptions(workflowBundle: ReplayWorkerOptions['workflowBundle'], replayName: string): ReplayWorkerOptions {
  // Typed out of ReplayWorkerOptions, yet read at run time (the replayer spreads these options over its defaults):
  // test/upstream/replayThread.test.ts tells when an SDK upgrade changes either.
  const options = { workflowBundle, replayName, debugMode: false };
  return options as ReplayWorkerOptions;
}

interface Fetched {
  wf: WorkflowExecutionInfo;
  history?: History;
  error?: string;
  stuck?: string;
}

/**
 * Replays every workflow history of a namespace with the given workflow
 * code: the check that a deploy breaks no running or finished workflow.
 * Histories are fetched concurrently, ahead of the replayer, in list order;
 * open histories replay as far as they go.
 */
export async function replayAll(opts: ReplayAllOptions): Promise<ReplayReport> {
  const started = Date.now();
  const listed: WorkflowExecutionInfo[] = [];
  for await (const wf of opts.temporal.list(opts.query)) listed.push(wf);

  const report: ReplayReport = { listed: listed.length, replayed: 0, reused: 0, skipped: [], nondeterministic: [], failed: [], stuck: [], taskTimeouts: 0, taskLatency: latencyOf([]), largestHistory: 0, ms: 0, waitedMs: 0 };
  const taskMs: number[] = [];
  const toReplay = listed.filter((wf) => {
    const reason = opts.skip?.(wf);
    if (reason) report.skipped.push({ workflowId: wf.workflowId, runId: wf.runId, reason });
    return !reason;
  });

  async function* fetchedHistories(): AsyncGenerator<{ workflowId: string; runId: string; history: History }> {
    const fetched = mapOrdered(toReplay, opts.concurrency ?? 8, (wf) => fetchOne(opts.temporal, wf));
    for (;;) {
      const waitedFrom = Date.now();
      const next = await fetched.next();
      report.waitedMs += Date.now() - waitedFrom;
      if (next.done) return;
      const f = next.value;
      if (f.stuck) report.stuck.push(problem(f.wf, f.stuck));
      const events = f.history?.events ?? [];
      for (const ms of workflowTaskMs(events)) taskMs.push(ms);
      if (events.length > report.largestHistory) {
        report.largestHistory = events.length;
        report.largest = { workflowId: f.wf.workflowId, runId: f.wf.runId };
      }
      if (f.history && opts.replayedBefore?.(f.wf.runId, events.length)) {
        report.replayed++;
        report.reused++;
      } else if (f.history) yield { workflowId: f.wf.workflowId, runId: f.wf.runId, history: f.history };
      else report.failed.push(problem(f.wf, f.error ?? 'history could not be fetched'));
    }
  }
  // One generator shared by every replayer: each next() hands a history to exactly one of them.
  const histories = fetchedHistories();
  const replayers = Math.max(1, opts.replayers ?? 1);
  const allDone = meeting(replayers);
  await Promise.all(
    Array.from({ length: replayers }, async (_, i) => {
      const arrive = allDone.member();
      try {
        for await (const outcome of replayHistories(opts.bundlePath, thenWait(histories, arrive), `replay-all-${i}`)) {
          count(report, outcome);
          opts.onReplayed?.(outcome);
        }
      } finally {
        void arrive();
      }
    }),
  );
  report.taskLatency = latencyOf(taskMs);
  report.ms = Date.now() - started;
  return report;
}

/**
 * Replay workers close only once every one of them is out of histories: the
 * SDK's Runtime shuts itself down when its last native object goes, and a
 * replay worker still being created then gets the dead runtime ("failed to
 * downcast any to … Runtime"; test/upstream/idleRuntime.test.ts). A worker
 * that has run out holds the runtime until the last one has too.
 */
async function* thenWait<T>(source: AsyncIterable<T>, arrive: () => Promise<void>): AsyncGenerator<T> {
  for await (const item of source) yield item;
  await arrive();
}

/** Waits until all `size` members have arrived; a member arriving twice counts once. */
function meeting(size: number): { member: () => () => Promise<void> } {
  let left = size;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    member: () => {
      let arrived = false;
      return () => {
        if (!arrived && --left === 0) open();
        arrived = true;
        return opened;
      };
    },
  };
}

function count(report: ReplayReport, o: ReplayOutcome): void {
  report.replayed++;
  report.taskTimeouts += o.taskTimeouts;
  const entry = { workflowId: o.workflowId, runId: o.runId, message: o.message ?? '' };
  if (o.verdict === 'nondeterministic') report.nondeterministic.push(entry);
  else if (o.verdict === 'failed') report.failed.push(entry);
}

/**
 * Replays histories one after another with one replay worker, for as long
 * as `histories` yields them, and says what each replay found, in order.
 */
async function* replayHistories(
  bundlePath: string,
  histories: AsyncIterable<{ workflowId: string; runId: string; history: History }>,
  replayName: string,
): AsyncGenerator<ReplayOutcome> {
  // The SDK replays one history at a time, in the order given: each result belongs to the oldest history not yet answered.
  const pending: Omit<ReplayOutcome, 'verdict' | 'message'>[] = [];
  async function* fed() {
    for await (const h of histories) {
      const events = h.history.events ?? [];
      const taskTimeouts = events.filter((e) => isStartToClose(e.workflowTaskTimedOutEventAttributes?.timeoutType)).length;
      pending.push({ workflowId: h.workflowId, runId: h.runId, events: events.length, taskTimeouts });
      yield { workflowId: h.workflowId, history: h.history };
    }
  }
  for await (const result of Worker.runReplayHistories(replayOptions({ codePath: bundlePath }, replayName), fed())) {
    const of = pending.shift()!;
    if (!result.error) yield { ...of, verdict: 'ok' };
    else yield { ...of, verdict: result.error instanceof DeterminismViolationError ? 'nondeterministic' : 'failed', message: firstLine(result.error) };
  }
}

async function fetchOne(client: Temporal, wf: WorkflowExecutionInfo): Promise<Fetched> {
  const handle = client.handle(wf.workflowId, wf.runId);
  let history: History;
  try {
    history = await handle.fetchHistory();
  } catch (err) {
    return { wf, error: `history could not be fetched: ${firstLine(err)}` };
  }
  if (wf.status.name !== 'RUNNING') return { wf, history };
  // A workflow that closed since the list was taken has no pending task to judge.
  const attempt = await handle.describe().then((d) => d.raw.pendingWorkflowTask?.attempt ?? 0, () => 0);
  return { wf, history, stuck: failingTask(history, attempt) };
}

/**
 * Why a running workflow looks stuck, or undefined. Temporal records a
 * task's first failure in history and retries it "transiently" (unrecorded,
 * attempt counting up). A task that timed out once is different: its worker
 * died or stopped holding it, and the next worker to poll takes it again
 * (attempt 2). So a stuck workflow is one whose last task outcome is a
 * failure, or whose task has been tried more than twice; a single time-out
 * is only a worker that went away (a killed worker, a test stack stopped).
 */
export function failingTask(history: History, attempt: number): string | undefined {
  const outcome = lastTaskOutcome(history);
  // The server turned a completion down because new events had arrived (UnhandledCommand): it scheduled a fresh task
  // at once, attempt 1; only a worker that then went away (a stopped test stack) leaves it there.
  if (outcome === 'superseded') return attempt > 2 ? `workflow task attempt ${attempt}` : undefined;
  if (outcome === 'failed') return attempt > 1 ? `workflow task failed, attempt ${attempt}` : 'history ends in WorkflowTaskFailed';
  if (attempt > 2 || (attempt === 2 && outcome !== 'timedOut')) return `workflow task attempt ${attempt}`;
  return undefined;
}

function lastTaskOutcome(history: History): 'completed' | 'failed' | 'superseded' | 'timedOut' | undefined {
  const events = history.events ?? [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.workflowTaskCompletedEventAttributes) return 'completed';
    if (e.workflowTaskFailedEventAttributes) return isUnhandledCommand(e.workflowTaskFailedEventAttributes.cause) ? 'superseded' : 'failed';
    if (e.workflowTaskTimedOutEventAttributes) return 'timedOut';
  }
  return undefined;
}

/** TIMEOUT_TYPE_START_TO_CLOSE, as a number from the wire or a name from JSON. */
function isStartToClose(type: unknown): boolean {
  return type === 1 || type === 'TIMEOUT_TYPE_START_TO_CLOSE';
}

/** WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND, as a number from the wire or a name from JSON. */
function isUnhandledCommand(cause: unknown): boolean {
  return cause === 1 || cause === 'WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND';
}

function problem(wf: WorkflowExecutionInfo, message: string): ReplayProblem {
  return { workflowId: wf.workflowId, runId: wf.runId, message };
}

/**
 * What the replayer said, without its preface ("Replay failed ... Details:")
 * and, for a failed workflow task, without the Rust debug dump around the
 * workflow's own message (which carries a stack). A nondeterminism message
 * keeps its `HistoryEvent(id: N, ...)`, which dipper doctor reads.
 */
function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const details = text.includes('Details: ') ? text.slice(text.indexOf('Details: ') + 'Details: '.length) : text;
  const inner = /message: "((?:[^"\\]|\\.)*)"/.exec(details)?.[1];
  return (inner ?? details).split('\n')[0].slice(0, 300);
}

/** One line for a log or a test run's end: `replayed 412 histories in 9.1 s: 0 nondeterministic, 0 failed, 0 stuck, 2 skipped`. */
export function summarize(r: ReplayReport): string {
  return (
    `replayed ${r.replayed} histories in ${(r.ms / 1000).toFixed(1)} s` +
    (r.reused > 0 ? ` (${r.reused} of them replayed earlier at the same length)` : '') +
    `: ${r.nondeterministic.length} nondeterministic, ` +
    `${r.failed.length} failed, ${r.stuck.length} stuck, ${r.skipped.length} skipped` +
    ` (${(r.waitedMs / 1000).toFixed(1)} s of it waiting for histories)`
  );
}
