import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ParentClosePolicy,
  proxyActivities,
  sleep,
  startChild,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { runEndedSignal, systemMessageSignal } from '../agent/messages';
import { historyFull, readyToContinue } from '../events';
import { agentWorkflowId, approvalWorkflowId, questionWorkflowId } from '../ids';
import { approvalRunEndedSignal } from '../isphere/messages';
import { questionRunEndedSignal } from '../question/messages';
import { askSystemQuestions } from './ask';
import { tell } from '../signals';
import { agentIdKey, roleKey, runIdKey, statusKey } from '../searchAttributes';
import type { AgentIdentity } from '../../src/common/launchPayload';
import { agentSummary } from '../summaries';
import { installHandlers } from './handlers';
import { RunState, type RunInput } from './state';
import { agentWorkflow } from '../agent/workflow';

/** A regular activity on the shared queue: whichever worker takes it claims the run for its host. */
const claim = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { initialInterval: '500ms', maximumInterval: '5s', maximumAttempts: 10 } });


/**
 * One top-level user task. It starts the root agent, keeps the directory of
 * every agent in the run, holds what the root reports to its human, and
 * ends the run when the human approves the root's termination.
 */
export async function runWorkflow(input: RunInput): Promise<void> {
  const s = new RunState(input);
  // Handlers come first, so a query that arrives while the root is starting is answered.
  installHandlers(s);
  if (!input.data) await startRoot(s);
  if (s.data.deadline_at !== undefined) void watchDeadline(s);
  void s.events.flushForever(true);

  for (;;) {
    await condition(() => !s.active || (s.data.to_ask ?? []).length > 0 || historyFull(input));
    if ((s.data.to_ask ?? []).length > 0) await askSystemQuestions(input, s.data, s.events, s.asking);
    if (!s.active) return endRun(s);
    if (historyFull(input)) {
      await condition(readyToContinue(s.events));
      // Unwritten events travel in data (when they fit); a batch in flight is written again, and the log ignores the repeat.
      await continueAsNew<typeof runWorkflow>({ ...input, data: s.data });
    }
  }
}

/** Every agent, open question and approval of the run is told it ended; the end is recorded once every event is written. */
async function endRun(s: RunState): Promise<void> {
  const { data, events } = s;
  const runId = s.input.runId;
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
}

/**
 * The run's deadline: the root is told beforehand (a system message), and
 * when it passes an active run is cancelled as an operator would cancel it.
 * Runs through continue-as-new: the times are absolute and kept in data.
 */
async function watchDeadline(s: RunState): Promise<void> {
  const { input, data } = s;
  const at = data.deadline_at!;
  const warnAt = at - (input.deadlineWarningSeconds ?? 0) * 1000;
  if (!data.deadline_warned && warnAt < at) {
    if (Date.now() < warnAt) await sleep(warnAt - Date.now());
    if (!s.active) return;
    data.deadline_warned = true;
    const left = Math.max(0, Math.round((at - Date.now()) / 1000));
    s.events.emit('run_deadline_warning', { deadline_at: new Date(at).toISOString(), seconds_left: left });
    await tell(agentWorkflowId(input.runId, input.root.agentId), systemMessageSignal, {
      message_id: uuid4(),
      content: `deadline: this run will be cancelled at ${new Date(at).toISOString()} (in ${left} s). Wrap up and request termination before then.`,
    });
  }
  if (Date.now() < at) await sleep(at - Date.now());
  if (s.active) s.cancel({ by: 'deadline', reason: `the run's deadline (${new Date(at).toISOString()}) passed` });
}

async function startRoot(s: RunState): Promise<void> {
  const { input, data, events } = s;
  const { runId, root } = input;
  const claimed = await claim.claimRunHost({ runId });
  const workspacePath = claimed.workspacePath;
  if (claimed.host) data.host = claimed.host;
  data.workspace_path = workspacePath;
  const identity: AgentIdentity = { ...root, runId, teamId: null, leaderId: null, depth: 0, workspacePath, ...(data.host ? { host: data.host } : {}) };
  await startChild(agentWorkflow, {
    workflowId: agentWorkflowId(runId, root.agentId),
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowTaskTimeout: workflowInfo().taskTimeoutMs,
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
