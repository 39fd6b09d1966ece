import type { ProcessMetrics } from '../metrics/temporalCalls';
import type { QueryDefinition, UpdateDefinition, Workflow } from '@temporalio/common';
import { agentWorkflowId, runWorkflowId } from '../../workflows/ids';
import type { Logger } from '../log';
import type { TeamWorkflows } from '../registry/capabilities';
import { callTime, toolFailure, underDeadline, type StartOptions, type Temporal, type WorkflowRef } from '../temporal';

// Callers name these by the gateway's client; they are the module's error map and deadline policy.
export { beforeDeadline, NoAnswerInTime, NotFound, queryCapMs, WorkflowRefusal } from '../temporal';

/**
 * The gateway's use of src/temporal. Every call there is already bounded,
 * capped and retried by the connection's policy (src/temporal/policy.ts);
 * here its failures are named in the tool codes (errors.ts: refusals keep
 * the workflow's code, no answer is `unavailable` or `needs_repair`,
 * everything else an internal error), asked within the call's time.
 */
export class TeamClient implements TeamWorkflows {
  /** The bound on a call made outside any tool call's deadline (runtime and operator API): the connection's. */
  readonly callTimeoutMs: number;

  constructor(
    readonly temporal: Temporal,
    private readonly log: Logger,
    private readonly metrics?: ProcessMetrics,
  ) {
    const ms = temporal.policy.callTimeoutMs;
    if (ms === undefined) throw new Error('the gateway connects to Temporal with a call timeout');
    this.callTimeoutMs = ms;
  }

  agent(runId: string, agentId: string): WorkflowRef {
    return this.temporal.handle(agentWorkflowId(runId, agentId));
  }

  run(runId: string): WorkflowRef {
    return this.temporal.handle(runWorkflowId(runId));
  }

  /** Any other workflow of a run (a question, an approval), by its id. */
  handle<W extends Workflow = Workflow>(workflowId: string): WorkflowRef<W> {
    return this.temporal.handle<W>(workflowId);
  }

  start<W extends Workflow>(workflow: W, options: StartOptions<W>): Promise<WorkflowRef<W>> {
    return this.temporal.start(workflow, options);
  }

  update<Ret, Args extends unknown[]>(handle: WorkflowRef, def: UpdateDefinition<Ret, Args>, args: Args, updateId?: string): Promise<Ret> {
    this.metrics?.updates.inc({ update: def.name });
    return this.bounded(def.name, () => handle.update(def, args, updateId), handle.workflowId);
  }

  query<Ret, Args extends unknown[]>(handle: WorkflowRef, def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    this.metrics?.queries.inc({ query: def.name });
    return this.bounded(def.name, () => handle.query(def, ...args), handle.workflowId);
  }

  /**
   * Temporal calls made by fn, their failures named in the tool codes. The
   * calls share one deadline, fixed here, so the reserve the policy keeps
   * between their end and the caller's is this one's to ask, when they fail,
   * whether the workflow is broken.
   */
  async bounded<T>(what: string, fn: () => Promise<T>, workflowId?: string): Promise<T> {
    const time = callTime(this.temporal.policy)!;
    try {
      return await underDeadline(time.end, fn);
    } catch (err) {
      throw await toolFailure(err, { what, workflowId, diagnosis: time.diagnosis, temporal: this.temporal, log: this.log });
    }
  }

  /** The run an agent id belongs to, from visibility; used only to explain a failed lookup. */
  async runOfAgent(agentId: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]+$/.test(agentId)) return null;
    return this.bounded('runOfAgent', async () => {
      for await (const wf of this.temporal.list(`DipperAgentId = "${agentId}"`, 1)) {
        const runId = wf.searchAttributes?.DipperRunId;
        return Array.isArray(runId) && typeof runId[0] === 'string' ? runId[0] : null;
      }
      return null;
    });
  }
}
