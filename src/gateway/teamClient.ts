import { randomUUID } from 'node:crypto';
import {
  Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, type QueryDefinition, type UpdateDefinition } from '@temporalio/common';
import { agentWorkflowId, runWorkflowId } from '../../workflows/ids';
import { safeMessage, type Logger } from '../log';
import { internalError, ToolError } from '../registry/errors';

/** The workflow behind a call does not exist (or has closed); callers turn this into their own code. */
export class NotFound extends Error {}

const MAX_ATTEMPTS = 12;

/**
 * Refusals that say the update was never applied, so sending it again is
 * safe: the recipient has too many updates in flight, or the server handed
 * it to a workflow task that finished without looking at it.
 */
function isRetryable(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const e = err as { code?: number; cause?: { code?: number; message?: string; type?: string }; message?: string };
  if (e.cause?.type === 'UnprocessedUpdate') return true;
  const text = `${e.message ?? ''} ${e.cause?.message ?? ''}`;
  return e.code === 8 || e.cause?.code === 8 || /too many outstanding|resource ?exhausted|wasn't processed by worker/i.test(text);
}

/** Spec codes are lower-case words (`unknown_task`); `internal` and error class names (`Error`) are not refusals. */
function isRefusal(type: string | undefined | null): type is string {
  return typeof type === 'string' && type !== 'internal' && /^[a-z][a-z0-9_.]*$/.test(type);
}

/** Full jitter: spreads fifty senders hitting one recipient across the backoff window. */
function backoff(attempt: number): Promise<void> {
  const cap = Math.min(2000, 25 * 2 ** attempt);
  return new Promise((r) => setTimeout(r, Math.random() * cap));
}

/**
 * The gateway's only path to Temporal. It turns workflow refusals into
 * ToolErrors carrying the spec's code, retries a busy recipient with
 * jittered backoff, and hides everything else behind an internal error.
 */
export class TeamClient {
  constructor(
    readonly client: Client,
    private readonly log: Logger,
  ) {}

  agent(runId: string, agentId: string): WorkflowHandle {
    return this.client.workflow.getHandle(agentWorkflowId(runId, agentId));
  }

  run(runId: string): WorkflowHandle {
    return this.client.workflow.getHandle(runWorkflowId(runId));
  }

  async update<Ret, Args extends unknown[]>(
    handle: WorkflowHandle,
    def: UpdateDefinition<Ret, Args>,
    args: Args,
    updateId: string = randomUUID(),
  ): Promise<Ret> {
    // One id for every attempt: a retry of an Update the server already took is answered, not applied again.
    for (let attempt = 0; ; attempt++) {
      try {
        // The SDK's overloads split on arity; the definition already ties args to the handler's type.
        const call = handle.executeUpdate as (d: unknown, o: { args: unknown[]; updateId: string }) => Promise<Ret>;
        return await call.call(handle, def, { args, updateId });
      } catch (err) {
        if (isRetryable(err) && attempt < MAX_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw this.map(err, def.name);
      }
    }
  }

  async query<Ret, Args extends unknown[]>(handle: WorkflowHandle, def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret> {
    try {
      return await handle.query(def, ...args);
    } catch (err) {
      throw this.map(err, def.name);
    }
  }

  /** The run an agent id belongs to, from visibility; used only to explain a failed lookup. */
  async runOfAgent(agentId: string): Promise<string | null> {
    if (!/^[A-Za-z0-9_-]+$/.test(agentId)) return null;
    for await (const wf of this.client.workflow.list({ query: `DipperAgentId = "${agentId}"`, pageSize: 1 })) {
      const runId = wf.searchAttributes?.DipperRunId;
      return Array.isArray(runId) && typeof runId[0] === 'string' ? runId[0] : null;
    }
    return null;
  }

  private map(err: unknown, what: string): Error {
    if (err instanceof WorkflowNotFoundError) return new NotFound(what);
    // Only a workflow's refusal (a spec code such as unknown_task) is shown; an activity's own failure is internal.
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure && isRefusal(err.cause.type)) {
      const extra = (err.cause.details?.[0] ?? {}) as Record<string, unknown>;
      return new ToolError(err.cause.type, err.cause.message, extra);
    }
    const text = err instanceof Error ? err.message : '';
    if (/workflow execution already completed|not found/i.test(text)) return new NotFound(what);
    this.log.error({ call: what, err: safeMessage(err) }, 'temporal call failed');
    return internalError();
  }
}
