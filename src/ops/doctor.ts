import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import Long from 'long';
import { runWorkflow } from '../../workflows';
import { typeIs, type Temporal, type WorkflowSummary } from '../temporal';
import { endedAgents, runIdOf } from './endedAgents';
import { replayAll, type ReplayProblem, type ReplayReport } from './replayAll';
import { pinnedElsewhere } from '../versioning/pinned';

export interface Finding {
  workflowId: string;
  runId: string;
  /** `ended`: the server closed the workflow (terminated it, say for a task over its size limits) while its run goes on. */
  kind: 'nondeterministic' | 'stuck' | 'failed' | 'ended';
  message: string;
  /** The WorkflowTaskCompleted event a repair resets to: the task whose commands replay disowns. */
  resetEventId?: number;
}

export interface Diagnosis {
  findings: Finding[];
  replay: ReplayReport;
}

export interface DoctorOptions {
  temporal: Temporal;
  bundlePath: string;
  /** The bundle's build: workflows pinned to another build are skipped (their own workers run them). */
  buildId?: string;
  /** Only the workflows of this run (`dipper doctor --run`). */
  runId?: string;
}

const EVENT_ID = /HistoryEvent\(id: (\d+)/;

/**
 * Finds the running workflows that are broken or will break: those whose
 * history today's code cannot replay (a worker that loses its cache fails
 * their next workflow task for ever), and those whose task keeps failing
 * for another reason (a payload over Temporal's limit, for instance).
 */
export async function diagnose(o: DoctorOptions): Promise<Diagnosis> {
  const skip = (wf: WorkflowSummary) => ((b) => (b ? `pinned to build ${b}` : undefined))(pinnedElsewhere(wf, o.buildId));
  if (o.runId !== undefined && !/^[A-Za-z0-9_-]+$/.test(o.runId)) throw new Error(`not a run id: ${JSON.stringify(o.runId)}`);
  const scope = o.runId ? ` AND DipperRunId = "${o.runId}"` : '';
  const replay = await replayAll({ temporal: o.temporal, bundlePath: o.bundlePath, query: `ExecutionStatus = "Running"${scope}`, skip });
  const findings: Finding[] = [];
  for (const p of replay.nondeterministic) {
    findings.push({ ...p, kind: 'nondeterministic', resetEventId: await resetPoint(o.temporal, p) });
  }
  const seen = new Set(findings.map((f) => f.runId));
  for (const p of replay.stuck) if (!seen.has(p.runId)) findings.push({ ...p, kind: 'stuck' });
  for (const p of replay.failed) findings.push({ ...p, kind: 'failed' });
  findings.push(...(await endedByServer(o, scope)));
  return { findings, replay };
}

/** Agents of a live run whose workflow the server closed (endedAgents): its directory still shows them as they were. */
async function endedByServer(o: DoctorOptions, scope: string): Promise<Finding[]> {
  const live = new Set<string>();
  for await (const wf of o.temporal.list(`${typeIs(runWorkflow)} AND ExecutionStatus = "Running"${scope}`)) {
    const runId = runIdOf(wf);
    if (runId) live.add(runId);
  }
  if (live.size === 0) return [];
  const ended = await endedAgents(o.temporal, scope);
  return ended
    .filter((a) => a.dipperRunId !== undefined && live.has(a.dipperRunId))
    .map((a) => ({ workflowId: a.workflowId, runId: a.runId, kind: 'ended' as const, message: a.message }));
}

async function resetPoint(client: Temporal, p: ReplayProblem): Promise<number | undefined> {
  const history = await client.handle(p.workflowId, p.runId).fetchHistory();
  return resetEventId(history.events ?? [], p.message);
}

/**
 * The last workflow task completed before the first event replay disagrees
 * with (named in the replayer's message). Resetting there throws that task's
 * commands away and runs it again with today's code, in the order replay
 * will always see.
 */
type HistoryEvent = {
  eventId?: unknown;
  workflowTaskCompletedEventAttributes?: unknown;
  workflowExecutionUpdateAcceptedEventAttributes?: unknown;
  workflowExecutionUpdateCompletedEventAttributes?: { acceptedEventId?: unknown } | null;
  markerRecordedEventAttributes?: { markerName?: string | null; details?: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null } | null;
};

/**
 * Where replay parted from history. Most messages name the event; one that
 * meets a patch marker no code asked for names the patch instead, so the
 * marker of that patch is the point.
 */
function divergingEvent(events: HistoryEvent[], message: string): number {
  const named = Number(EVENT_ID.exec(message)?.[1]);
  if (Number.isFinite(named)) return named;
  const patch = /patch marker encountered for change ([\w.-]+)/.exec(message)?.[1];
  if (!patch) return Number.NaN;
  const marker = events.find((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    if (!data) return false;
    try {
      return (JSON.parse(Buffer.from(data).toString('utf8')) as { id?: string }).id === patch;
    } catch {
      return false;
    }
  });
  return marker ? Number(marker.eventId) : Number.NaN;
}

/**
 * The workflow task to reset to: the last one completed before replay parted from history at which no Update was in
 * flight (accepted, not yet completed). A reset keeps the events before that task's completion, and one that kept an
 * Update's acceptance without its completion left the new run failing every task for good
 * ("BAD_UPDATE_WORKFLOW_EXECUTION_MESSAGE ... absent message ID .../request/complete", the kill matrix of issue 20:
 * a worker's automatic repair, since removed, made four such agents). An Update accepted after the point is reapplied by the reset, like a Signal.
 */
export function resetEventId(events: HistoryEvent[], message: string): number | undefined {
  const diverging = divergingEvent(events, message);
  if (!Number.isFinite(diverging)) return undefined;
  const inFlight = new Set<number>();
  let found: number | undefined;
  for (const e of events) {
    const id = Number(e.eventId);
    if (id >= diverging) break;
    if (e.workflowTaskCompletedEventAttributes && inFlight.size === 0) found = id;
    if (e.workflowExecutionUpdateAcceptedEventAttributes) inFlight.add(id);
    const completed = e.workflowExecutionUpdateCompletedEventAttributes;
    if (completed) inFlight.delete(Number(completed.acceptedEventId));
  }
  return found;
}

/**
 * Repairs a nondeterministic workflow: a reset to its last good workflow
 * task that reapplies every Signal and Update received after it. Dipper's
 * handlers are idempotent by message id and sequence number, so the inbox
 * and every acknowledgement come back as they were; the events after the
 * reset point are run again. Other findings have no automatic repair.
 */
export async function repair(o: DoctorOptions, f: Finding, how: { reason?: string; requestId?: string } = {}): Promise<string> {
  if (f.kind !== 'nondeterministic' || f.resetEventId === undefined) throw new Error('no automatic repair for this finding');
  return o.temporal.reset({
    workflowExecution: { workflowId: f.workflowId, runId: f.runId },
    reason: how.reason ?? `dipper doctor: replay disagrees with the workflow task completed at event ${f.resetEventId}`,
    workflowTaskFinishEventId: Long.fromNumber(f.resetEventId),
    // The same id for the same run and point: the server makes one reset of requests that repeat it.
    requestId: how.requestId ?? randomUUID(),
    resetReapplyType: temporal.api.enums.v1.ResetReapplyType.RESET_REAPPLY_TYPE_ALL_ELIGIBLE,
    resetReapplyExcludeTypes: [],
  });
}
