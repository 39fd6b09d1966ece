import { prefixed, type Text } from '../content';
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { humanAnsweredSignal, runEndedSignal, systemMessageSignal } from '../agent/messages';
import { refuse } from '../errors';
import { EventBuffer, historyFull, readyToContinue } from '../events';
import { agentWorkflowId, approvalWorkflowId, questionWorkflowId } from '../ids';
import { approvalRunEndedSignal } from '../isphere/messages';
import { questionRunEndedSignal, questionWithdrawnSignal } from '../question/messages';
import { askSystemQuestions, systemQid, type Asking, type QueuedAsk } from './ask';
import { rootReviewAsk } from '../question/system';
import { wakeSignal } from '../interceptors';
import { tell } from '../signals';
import { agentIdKey, roleKey, runIdKey, statusKey } from '../searchAttributes';
import type { AgentIdentity, DipperEvent, Limits, PeerEntry } from '../types';
import { agentSummary } from '../summaries';
import { Directory } from './directory';
import { checkReservation, freshQuota, release, reserve, type QuotaData } from './quota';
import * as m from './messages';
import { agentWorkflow } from '../agent/workflow';

export interface RunInput {
  runId: string;
  /** Long tasks are a reference into the content store (every agent of the run carries the task). */
  task: Text;
  root: { agentId: string; name: string; role: string; skill: string };
  limits: Limits;
  /** The run is cancelled this long after it starts (absent or 0: no deadline); the root is warned `deadlineWarningSeconds` before. */
  deadlineSeconds?: number;
  deadlineWarningSeconds?: number;
  /** Whether a human gateway takes questions (DIPPER_HUMAN_GATEWAY); absent in older runs, which had one. */
  humanGateway?: boolean;
  data?: RunData;
}

export interface RunData {
  status: m.RunStatus;
  /** Who cancelled the run and why (cancelled runs only). */
  cancelled?: m.CancelRun;
  /** Spawn quotas' counts (absent until the first spawn asks). */
  quota?: QuotaData;
  /** When the run is cancelled by its deadline (ms since the epoch), and whether the root was warned. */
  deadline_at?: number;
  deadline_warned?: boolean;
  /** The root's workflow has started, so its token can be used. */
  root_ready: boolean;
  created_at: number;
  workspace_path: string;
  /** The host the run is pinned to (workflows/host.ts); absent on one host and for runs from before `run-host`. */
  host?: string;
  /** Questions of the run still open (workflows/question), ended with the run. */
  questions?: string[];
  /** iSphere approvals of the run still open (workflows/isphere), ended with the run. */
  approvals?: string[];
  /** System questions to start (root reviews, watchdog escalations), and the keys of the last ones asked, so a signal sent twice asks once. */
  to_ask?: QueuedAsk[];
  asked_keys?: string[];
  entries: Record<string, PeerEntry>;
  pending_root: m.RootReport[];
  events: DipperEvent[];
}

/** A regular activity on the shared queue: whichever worker takes it claims the run for its host. */
const claim = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { initialInterval: '500ms', maximumInterval: '5s', maximumAttempts: 10 } });


/**
 * One top-level user task. It starts the root agent, keeps the directory of
 * every agent in the run, holds what the root reports to its human, and
 * ends the run when the human approves the root's termination.
 */
export async function runWorkflow(input: RunInput): Promise<void> {
  const { runId, root } = input;
  const data = input.data ?? initialData(input);
  const dir = new Directory(data.entries);
  const events = new EventBuffer(runId, null, data.events);
  const rootWorkflowId = agentWorkflowId(runId, root.agentId);

  setHandler(m.peerChangedSignal, (change) => dir.apply(change));
  /** The system question being started, and those withdrawn meanwhile (workflows/run/ask.ts). */
  const asking: Asking = { starting: null, withdrawn: new Map() };
  // The root's reports are questions to the human (answered in the console or through /root/decision). A report's
  // question still queued or being started is withdrawn without a signal sent too early.
  const withdraw = (report: m.RootReport | undefined, reason: string) => {
    if (!report?.qid) return Promise.resolve(true);
    // Not started yet: it leaves the queue and is never asked (a signal would find no workflow, and it would be asked later).
    const queued = (data.to_ask ?? []).findIndex((a) => a.qid === report.qid);
    if (queued >= 0) {
      data.to_ask!.splice(queued, 1);
      return Promise.resolve(true);
    }
    // Being started: a signal now could reach the server before the workflow exists. It is told once started.
    if (asking.starting === report.qid) {
      asking.withdrawn.set(report.qid, reason);
      return Promise.resolve(true);
    }
    return tell(questionWorkflowId(runId, report.qid), questionWithdrawnSignal, { reason });
  };
  setHandler(m.rootReportSignal, (report) => {
    const before = data.pending_root.find((r) => r.kind === report.kind);
    const entry = { ...report };
    if (data.status === 'active') {
      entry.qid = systemQid();
      (data.to_ask ??= []).push({ ...rootReviewAsk(report.kind, root.agentId, report.detail), key: `root-${report.kind}-${report.ts}`, qid: entry.qid });
    }
    data.pending_root = data.pending_root.filter((r) => r.kind !== report.kind).concat(entry);
    // A newer report replaces the question about the older one.
    if (before?.qid) return withdraw(before, 'The root reported again; a newer question replaces this one.').then(() => undefined);
  });
  setHandler(m.systemQuestionSignal, (ask) => {
    if (data.status !== 'active') return;
    const asked = (data.asked_keys ??= []);
    if (asked.includes(ask.key) || (data.to_ask ?? []).some((a) => a.key === ask.key)) return;
    // A thousand idle agents must not become a thousand questions past the run's limit: the rest are recorded, not asked.
    const cap = input.limits.maxOpenQuestions;
    if (cap !== undefined && (data.questions ?? []).length + (data.to_ask ?? []).length >= cap) {
      events.emit('system_question_dropped', { kind: ask.system.kind, about: ask.system.agent_id, open: (data.questions ?? []).length, limit: cap });
      return;
    }
    (data.to_ask ??= []).push({ ...ask, qid: systemQid() });
  });
  setHandler(m.peersQuery, (args) => dir.peers(args?.caller_id ?? root.agentId, args?.scope ?? 'all'), {
    description: "The run's directory as list_peers sees it: { caller_id?: agent (the root), scope?: team | children | all (all) }.",
  });
  setHandler(
    m.openQuestionsQuery,
    (args) => {
      const open = data.questions ?? [];
      return { open: open.length, includes: args?.qid !== undefined && open.includes(args.qid), limit: input.limits.maxOpenQuestions ?? null };
    },
    { description: 'Open questions of the run, and its limit: { qid?: one to look for }.' },
  );
  setHandler(m.agentsQuery, () => Object.values(data.entries), { description: "Every agent's directory entry, with its leader and depth: the run's agent tree." });
  setHandler(m.peerQuery, (args) => dir.get(args?.agent_id ?? root.agentId), { description: "One agent's directory entry: { agent_id?: (the root) }." });
  setHandler(m.runQuery, () => ({
    run_id: runId,
    status: data.status,
    root_ready: data.root_ready,
    task: input.task,
    root_agent_id: root.agentId,
    agent_count: dir.size,
    created_at: data.created_at,
    pending_root: data.pending_root,
    deadline_at: data.deadline_at ? new Date(data.deadline_at).toISOString() : null,
    host: data.host ?? null,
  }), { description: "The run: status, task, root, agent count, the root's decisions waiting for a person, deadline, host." });
  /**
   * The human's verdict on the root's pending review or termination request.
   * Called by both handlers below with no await of its own around it: the
   * Update's completion must come in the same order among a task's commands
   * as it did before this was shared (older histories replay against it).
   */
  const decide = async ({ kind, verdict, text, operator }: m.RootDecision) => {
    data.pending_root = data.pending_root.filter((r) => r.kind !== kind);
    // A turned-down termination request is recorded by the root itself (completion.rework), like any leader's answer.
    if (verdict === 'approve' || kind === 'review') {
      events.emit(verdict === 'approve' ? 'completion.approved' : 'completion.rework', { kind, by: 'user', ...(operator ? { operator } : {}) }, root.agentId);
    }
    if (verdict === 'rework') {
      await tell(rootWorkflowId, systemMessageSignal, { message_id: uuid4(), content: prefixed('rework: ', text ?? '') });
    }
    if (verdict === 'approve' && kind === 'termination') data.status = 'completed';
    else await tell(rootWorkflowId, humanAnsweredSignal, { kind });
    return { ok: true as const, run_status: data.status };
  };
  setHandler(m.rootAnsweredSignal, (answer) => {
    // Decided already (through /root/decision, or a newer report replaced the question): nothing to do.
    if (!data.pending_root.some((r) => r.kind === answer.kind && r.qid === answer.qid)) return;
    return decide(answer).then(() => undefined);
  });
  setHandler(
    m.rootDecisionUpdate,
    (decision) => {
      const report = data.pending_root.find((r) => r.kind === decision.kind);
      // Answered here: the question about it in the console is over (reports from before `root-questions` have none).
      if (!report?.qid) return decide(decision);
      return decide(decision).then(async (out) => {
        await withdraw(report, `Decided through the operator API${decision.operator ? ` by ${decision.operator}` : ''}.`);
        return out;
      });
    },
    {
      validator: ({ kind }) => {
        if (!data.pending_root.some((r) => r.kind === kind)) {
          throw refuse('nothing_pending', `The root has no pending ${kind} to decide.`, { field: 'kind' });
        }
      },
    },
  );

  const quota = () => (data.quota ??= freshQuota(input.limits, dir.size, Date.now()));
  setHandler(
    m.reserveSpawnsUpdate,
    ({ count, releases }) => {
      for (const r of releases ?? []) release(quota(), r.reservation_id, r.spawned);
      const reservationId = uuid4();
      reserve(quota(), input.limits, reservationId, count, Date.now());
      return { reservation_id: reservationId };
    },
    {
      validator: ({ count, releases }) => {
        if (data.status !== 'active') throw refuse('run_ended', 'The run has ended; nothing more can be spawned in it.');
        // Judged as the handler would act: the caller's releases first, on a copy (a validator changes nothing).
        const q = data.quota ?? freshQuota(input.limits, dir.size, Date.now());
        const after = { ...q, in_flight: { ...q.in_flight } };
        for (const r of releases ?? []) release(after, r.reservation_id, r.spawned);
        checkReservation(after, input.limits, count, Date.now());
      },
    },
  );
  setHandler(wakeSignal, () => undefined);
  setHandler(m.questionOpenedSignal, ({ qid }) => {
    const open = (data.questions ??= []);
    if (!open.includes(qid)) open.push(qid);
  });
  setHandler(m.questionClosedSignal, ({ qid }) => {
    data.questions = (data.questions ?? []).filter((q) => q !== qid);
  });
  setHandler(m.approvalOpenedSignal, ({ approval_id }) => {
    const open = (data.approvals ??= []);
    if (!open.includes(approval_id)) open.push(approval_id);
  });
  setHandler(m.approvalClosedSignal, ({ approval_id }) => {
    data.approvals = (data.approvals ?? []).filter((a) => a !== approval_id);
  });
  setHandler(m.releaseSpawnsSignal, ({ reservation_id, spawned }) => release(quota(), reservation_id, spawned));

  setHandler(m.cancelRunUpdate, (cancel) => {
    // Cancelling an ended run changes nothing, and says how it ended.
    if (data.status === 'active') {
      data.status = 'cancelled';
      data.cancelled = cancel;
    }
    return { run_status: data.status };
  });

  // Handlers come first, so a query that arrives while the root is starting is answered.
  if (!input.data) await startRoot(input, data, events);
  if (data.deadline_at !== undefined) void watchDeadline(input, data, events);
  void events.flushForever(true);

  for (;;) {
    await condition(() => data.status !== 'active' || (data.to_ask ?? []).length > 0 || historyFull(input));
    if ((data.to_ask ?? []).length > 0) await askSystemQuestions(input, data, events, asking);
    if (data.status !== 'active') {
      await condition(allHandlersFinished);
      // Every agent stops its runtime and closes; their records stay in the event log.
      const told = new Set<string>();
      const tellNew = () =>
        Promise.all(
          Object.keys(data.entries)
            .filter((id) => !told.has(id))
            .map((id) => {
              told.add(id);
              return tell(agentWorkflowId(runId, id), runEndedSignal);
            }),
        );
      await tellNew();
      // Questions still open end with the run (their askers are ending too).
      if ((data.questions ?? []).length > 0) {
        await Promise.all(data.questions!.map((qid) => tell(questionWorkflowId(runId, qid), questionRunEndedSignal)));
      }
      // So do iSphere approvals.
      if ((data.approvals ?? []).length > 0) {
        await Promise.all(data.approvals!.map((id) => tell(approvalWorkflowId(runId, id), approvalRunEndedSignal)));
      }
      if (data.cancelled) events.emit('run_cancelled', { by: data.cancelled.by, reason: data.cancelled.reason });
      else events.emit('run_completed', {});
      // The run list tells completed and cancelled runs apart by this attribute.
      upsertSearchAttributes([{ key: statusKey, value: data.status }]);
      await events.drain();
      // A member whose registration arrived while the run was ending is told too.
      while (Object.keys(data.entries).some((id) => !told.has(id))) {
        await tellNew();
        await events.drain();
      }
      return;
    }
    if (historyFull(input)) {
      await condition(readyToContinue(events));
      // Unwritten events travel in data (when they fit); a batch in flight is written again, and the log ignores the repeat.
      await continueAsNew<typeof runWorkflow>({ ...input, data });
    }
  }
}

/**
 * The run's deadline: the root is told beforehand (a system message), and
 * when it passes an active run is cancelled as an operator would cancel it.
 * Runs through continue-as-new: the times are absolute and kept in data.
 */
async function watchDeadline(input: RunInput, data: RunData, events: EventBuffer): Promise<void> {
  const at = data.deadline_at!;
  const warnAt = at - (input.deadlineWarningSeconds ?? 0) * 1000;
  if (!data.deadline_warned && warnAt < at) {
    if (Date.now() < warnAt) await sleep(warnAt - Date.now());
    if (data.status !== 'active') return;
    data.deadline_warned = true;
    const left = Math.max(0, Math.round((at - Date.now()) / 1000));
    events.emit('run_deadline_warning', { deadline_at: new Date(at).toISOString(), seconds_left: left });
    await tell(agentWorkflowId(input.runId, input.root.agentId), systemMessageSignal, {
      message_id: uuid4(),
      content: `deadline: this run will be cancelled at ${new Date(at).toISOString()} (in ${left} s). Wrap up and request termination before then.`,
    });
  }
  if (Date.now() < at) await sleep(at - Date.now());
  if (data.status === 'active') {
    data.status = 'cancelled';
    data.cancelled = { by: 'deadline', reason: `the run's deadline (${new Date(at).toISOString()}) passed` };
  }
}

function initialData(input: RunInput): RunData {
  const { root } = input;
  const data: RunData = {
    status: 'active',
    root_ready: false,
    created_at: Date.now(),
    workspace_path: '',
    entries: {},
    pending_root: [],
    events: [],
  };
  if (input.deadlineSeconds) data.deadline_at = data.created_at + input.deadlineSeconds * 1000;
  data.entries[root.agentId] = {
    agent_id: root.agentId,
    name: root.name,
    role: root.role,
    team_id: null,
    leader_id: null,
    status: 'active',
    is_leader_of: [],
    depth: 0,
  };
  return data;
}

async function startRoot(input: RunInput, data: RunData, events: EventBuffer): Promise<void> {
  const { runId, root } = input;
  const claimed = await claim.claimRunHost({ runId });
  const workspacePath = claimed.workspacePath;
  if (claimed.host) data.host = claimed.host;
  data.workspace_path = workspacePath;
  const identity: AgentIdentity = { ...root, runId, teamId: null, leaderId: null, depth: 0, workspacePath, ...(data.host ? { host: data.host } : {}) };
  await startChild(agentWorkflow, {
    workflowId: agentWorkflowId(runId, root.agentId),
    parentClosePolicy: ParentClosePolicy.ABANDON,
    args: [{ identity, limits: input.limits, runTask: input.task, launch: { firstMessage: input.task, roleDescription: '', rules: [] } }],
    ...agentSummary(identity, input.task),
    typedSearchAttributes: [
      { key: runIdKey, value: runId },
      { key: agentIdKey, value: root.agentId },
      { key: roleKey, value: root.role },
      { key: statusKey, value: 'active' },
    ],
  });
  data.root_ready = true;
  events.emit('run_started', { task_bytes: typeof input.task === 'string' ? input.task.length : input.task.bytes, root_agent_id: root.agentId });
  events.emit('agent_spawned', { agent_id: root.agentId, name: root.name, role: root.role, skill: root.skill, depth: 0 }, root.agentId);
}
