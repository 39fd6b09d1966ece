import { randomUUID } from 'node:crypto';
import { MissingCredentialContext, NotSent, OutcomeUnknown, type TaskApiClient, type TaskOp } from '../common/taskApi/client';
import { NoAgentToken } from '../common/taskApi/tokens';
import { agentWorkflowId } from '../../workflows/ids';
import { peerQuery } from '../../workflows/run/messages';
import { callKey } from '../../workflows/receipts';
import { agentIdKey, runIdKey } from '../../workflows/searchAttributes';
import { taskMutationWorkflow } from '../../workflows/taskOp/workflow';
import { ToolError } from '../registry/errors';
import { fromService, outcomeUnknown, serviceUnavailable, taskError, type CallFacts } from '../registry/agentteam/errors';
import type { CallAbout, Caller, TaskBoardAccess } from '../registry/capabilities';
import type { TeamClient } from './teamClient';

type Raw = Record<string, unknown>;

const BOARDS_TTL_MS = 30_000;
/** One change's request body (the mutation workflow's input, kept in its history). Today's schemas keep a change under about 420 KB; this holds the bound if they grow. */
export const MAX_MUTATION_BYTES = 512 * 1024;
const BOARDS_HELD = 10_000;

/**
 * The task board as the agentteam tools see it. Reads go straight from the
 * gateway to the Task API (one request; docs/architecture.md says why).
 * Mutations run as an activity in a short workflow, so a gateway crash or
 * a client's retry never makes a keyed request twice.
 */
export class TaskBoard implements TaskBoardAccess {
  private readonly boardsOf = new Map<string, { boards: string[]; at: number }>();

  constructor(
    private readonly api: TaskApiClient,
    private readonly team: TeamClient,
    private readonly taskQueue: string,
    readonly budgetBytes: number,
  ) {}

  /** The boards an agent works on: its run's, its team's, and those of the teams it leads. */
  async boards(caller: Caller, mustHave?: string): Promise<string[]> {
    const key = `${caller.runId}/${caller.agentId}`;
    const held = this.boardsOf.get(key);
    if (held && Date.now() - held.at < BOARDS_TTL_MS && (!mustHave || held.boards.includes(mustHave))) return held.boards;
    const peer = await this.team.query(this.team.run(caller.runId), peerQuery, { agent_id: caller.agentId });
    const boards = [caller.runId, ...(peer?.team_id ? [peer.team_id] : []), ...(peer?.is_leader_of ?? [])];
    const unique = [...new Set(boards)];
    if (this.boardsOf.size >= BOARDS_HELD) this.boardsOf.delete(this.boardsOf.keys().next().value!);
    this.boardsOf.set(key, { boards: unique, at: Date.now() });
    return unique;
  }

  async read(caller: Caller, op: TaskOp, body: Raw, about: CallAbout): Promise<Raw> {
    const boards = await this.boards(caller, about.channel);
    try {
      const answer = await this.api.request({ op, agent: { agentId: caller.agentId, channels: boards }, body });
      if (!answer.ok) throw fromService(answer.status, answer.error, { ...about, boards });
      return (answer.body ?? {}) as Raw;
    } catch (err) {
      throw asToolError(err);
    }
  }

  /**
   * One mutation through `taskMutationWorkflow`. With an idempotency key the
   * workflow id is derived from (run, agent, tool, key, payload): the same
   * call attaches to the execution already under way, and once it has ended
   * the service's receipt answers the repeat.
   */
  async mutate(caller: Caller, op: TaskOp, body: Raw, opts: { tool: string; key?: string; retrySafe: boolean; about: CallAbout }): Promise<Raw> {
    // The body is the workflow's input, kept in its history: bounded in bytes, whatever the schemas allow together.
    const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
    if (bytes > MAX_MUTATION_BYTES) {
      throw taskError('invalid_input', `This change is ${bytes} bytes; one change may be at most ${MAX_MUTATION_BYTES}. Split it, or shorten its texts.`, {
        fieldErrors: { [largestField(body)]: `the change is at most ${MAX_MUTATION_BYTES} bytes in all, and this field is its largest part` },
      });
    }
    const boards = await this.boards(caller, opts.about.channel);
    const facts: CallFacts = { ...opts.about, boards };
    const suffix = opts.key ? callKey(opts.tool, { key: opts.key, body }).slice(opts.tool.length + 1) : randomUUID();
    let outcome;
    try {
      outcome = await this.team.bounded('taskMutation', () =>
        this.team.temporal.execute(taskMutationWorkflow, {
          taskQueue: this.taskQueue,
          workflowId: `${agentWorkflowId(caller.runId, caller.agentId)}/task/${opts.tool}/${suffix}`,
          args: [{ op, agentId: caller.agentId, channels: boards, body, retrySafe: opts.retrySafe }],
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowRunTimeout: '5 minutes',
          typedSearchAttributes: [
            { key: runIdKey, value: caller.runId },
            { key: agentIdKey, value: caller.agentId },
          ],
        }),
      );
    } catch (err) {
      // No answer in time: a request that is safe to repeat is `unavailable` (repeat it); any other may have happened.
      if (err instanceof ToolError && err.code === 'unavailable' && !opts.retrySafe) throw outcomeUnknown(facts);
      throw err;
    }
    if (outcome.kind === 'unknown') throw outcomeUnknown(facts);
    if (outcome.kind === 'not_sent') throw serviceUnavailable();
    if (!outcome.answer.ok) throw fromService(outcome.answer.status, outcome.answer.error, facts);
    return (outcome.answer.body ?? {}) as Raw;
  }
}

function asToolError(err: unknown): unknown {
  if (err instanceof ToolError) return err;
  if (err instanceof NotSent || err instanceof NoAgentToken) return serviceUnavailable();
  // A read that got no answer changed nothing: it can be asked again.
  if (err instanceof OutcomeUnknown) return taskError('task_service_timeout', 'The Task service did not answer in time. Nothing was changed; try again.', { retryable: true });
  if (err instanceof MissingCredentialContext) return taskError('task_credentials_missing', 'This agent has no Task service identity; nothing was sent.');
  return err;
}

/** The input field (snake_case, as the tool names it) that takes the most bytes of a change's body. */
function largestField(body: Raw): string {
  let largest = '';
  let most = -1;
  for (const [key, value] of Object.entries(body)) {
    const size = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
    if (size > most) [largest, most] = [key, size];
  }
  return largest.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
