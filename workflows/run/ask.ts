import { ParentClosePolicy, proxyActivities, startChild, uuid4, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { Artifact } from '../../activities/artifacts';
import type { Text } from '../../src/common/pure/content';
import { onHost } from '../host';
import type { EventBuffer } from '../events';
import { questionWorkflowId } from '../ids';
import { questionWithdrawnSignal, type QuestionInput } from '../question/messages';
import { questionWorkflow } from '../question/workflow';
import { tell } from '../signals';
import type { SystemAsk } from '../question/system';
import { agentIdKey, runIdKey, statusKey } from '../searchAttributes';
import type { RunData, RunInput } from './state';

export type QueuedAsk = SystemAsk & { key: string; qid: string };

/** The question whose start is in flight, and the reasons it (or another) was withdrawn before its start answered. */
export interface Asking {
  starting: string | null;
  withdrawn: Map<string, string>;
}

const READ_FILES: ActivityOptions = { startToCloseTimeout: '10s', scheduleToCloseTimeout: '30s', retry: { maximumAttempts: 2 } };
const unpinnedFiles = proxyActivities<Activities>(READ_FILES);

/** The files a root's report names, read on the run's host; none when they cannot be read (the report still reaches the person). */
async function artifactsOf(data: RunData, report: Text | null): Promise<Artifact[] | undefined> {
  if (!report || !data.workspace_path) return undefined;
  return onHost(data.host ?? undefined, unpinnedFiles, READ_FILES)
    .reviewArtifacts({ workspace: data.workspace_path, report })
    .catch(() => undefined);
}

/** Keys remembered against a signal sent twice; older ones have long been asked. */
const KEPT_KEYS = 200;

/** A qid for a question Dipper asks itself: the same shape as ask_user's, so every tool and route takes it. */
export function systemQid(): string {
  return `q_sys_${uuid4().replace(/-/g, '').slice(0, 16)}`;
}

/**
 * Starts the queued system questions, each its own question workflow beside
 * the run's agents (abandoned by the run, like them: the run ends them when
 * it ends). They go straight to the human gateway.
 */
export async function askSystemQuestions(input: RunInput, data: RunData, events: EventBuffer, asking: Asking): Promise<void> {
  while ((data.to_ask ?? []).length > 0) {
    const ask = data.to_ask!.shift()!;
    if (data.status !== 'active') continue;
    // Being started from here on: a newer report that withdraws this one meanwhile is told once it exists.
    asking.starting = ask.qid;
    const artifacts = ask.system.kind === 'root_review' || ask.system.kind === 'root_termination' ? await artifactsOf(data, ask.context) : undefined;
    if (data.status !== 'active') {
      asking.starting = null;
      asking.withdrawn.delete(ask.qid);
      continue;
    }
    const args: QuestionInput = {
      runId: input.runId,
      qid: ask.qid,
      askerId: ask.system.agent_id,
      askerRole: 'dipper',
      ancestors: [],
      questions: ask.questions,
      context: ask.context,
      toUser: true,
      system: ask.system,
      humanGateway: input.humanGateway ?? true,
      // Nobody re-issues a system question: it closes once answered.
      reattachMs: 0,
      decisionKeys: input.decisionKeys,
      ...(artifacts ? { artifacts } : {}),
    };
    // Open from now on, before the start returns or its own word arrives (questionOpened): an escalation signalled
    // meanwhile is judged against the run's limit with this one counted.
    const open = (data.questions ??= []);
    if (!open.includes(ask.qid)) open.push(ask.qid);
    asking.starting = ask.qid;
    await startChild(questionWorkflow, {
      workflowId: questionWorkflowId(input.runId, ask.qid),
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowTaskTimeout: workflowInfo().taskTimeoutMs,
      args: [args],
      staticSummary: ask.summary,
      staticDetails: `Asked by Dipper (${ask.system.kind}) about ${ask.system.agent_id}.`,
      typedSearchAttributes: [
        { key: runIdKey, value: input.runId },
        { key: agentIdKey, value: ask.system.agent_id },
        { key: statusKey, value: 'asked' },
      ],
    });
    asking.starting = null;
    events.emit('system_question_asked', { qid: ask.qid, kind: ask.system.kind, about: ask.system.agent_id });
    // Withdrawn while its start was in flight: told now that it exists.
    const reason = asking.withdrawn.get(ask.qid);
    if (reason !== undefined) {
      asking.withdrawn.delete(ask.qid);
      await tell(questionWorkflowId(input.runId, ask.qid), questionWithdrawnSignal, { reason });
    }
    const keys = (data.asked_keys ??= []);
    keys.push(ask.key);
    if (keys.length > KEPT_KEYS) keys.splice(0, keys.length - KEPT_KEYS);
  }
}
