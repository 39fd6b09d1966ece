import { MissingCredentialContext, NotSent, OutcomeUnknown, type TaskApiClient, type TaskOp } from '../common/taskApi/client';
import { NoAgentToken } from '../common/taskApi/tokens';
import { peerQuery } from '../../workflows/run/messages';
import { callDeadline } from '../temporal';
import { ToolError } from '../common/toolErrors';
import { fromService, outcomeUnknown, serviceUnavailable, taskError, type CallFacts } from '../registry/agentteam/errors';
import type { CallAbout, Caller, TaskBoardAccess } from '../registry/capabilities';
import type { TeamClient } from './teamClient';

type Raw = Record<string, unknown>;

const BOARDS_TTL_MS = 30_000;
/** One change's request body. Today's schemas keep a change under about 420 KB; this holds the bound if they grow. */
export const MAX_MUTATION_BYTES = 512 * 1024;
const BOARDS_HELD = 10_000;

/**
 * The task board as the agentteam tools see it. Reads go straight from the
 * gateway to the Task API (one request; docs/architecture.md says why),
 * and so do changes: the service's idempotency receipts, not a workflow,
 * keep a keyed create to one task.
 */
export class TaskBoard implements TaskBoardAccess {
  private readonly boardsOf = new Map<string, { boards: string[]; at: number }>();

  constructor(
    private readonly api: TaskApiClient,
    private readonly team: TeamClient,
    /** A change made outside any tool call's deadline gets this long. */
    private readonly callTimeoutMs: number,
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
   * One mutation, sent straight to the Task API like a read. The service's
   * receipt keeps a keyed create to one task however often it is sent, so a
   * request that is safe to repeat (a keyed create, a claim) is sent again
   * while the call's deadline allows; any other is sent once, and a lost
   * answer is `task_outcome_unknown`. A gateway that dies mid-request leaves
   * its caller without an answer, which is the truth: it repeats a keyed
   * create safely, and looks before repeating anything else.
   */
  async mutate(caller: Caller, op: TaskOp, body: Raw, opts: { tool: string; key?: string; retrySafe: boolean; about: CallAbout }): Promise<Raw> {
    const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
    if (bytes > MAX_MUTATION_BYTES) {
      throw taskError('invalid_input', `This change is ${bytes} bytes; one change may be at most ${MAX_MUTATION_BYTES}. Split it, or shorten its texts.`, {
        fieldErrors: { [largestField(body)]: `the change is at most ${MAX_MUTATION_BYTES} bytes in all, and this field is its largest part` },
      });
    }
    const boards = await this.boards(caller, opts.about.channel);
    const facts: CallFacts = { ...opts.about, boards };
    const deadline = callDeadline() ?? Date.now() + this.callTimeoutMs;
    for (let attempt = 1; ; attempt++) {
      let answer;
      try {
        // Ended a moment before the call must answer, so a lost answer is told as one, never as the call's timeout.
        answer = await this.api.request({ op, agent: { agentId: caller.agentId, channels: boards }, body }, deadline - ANSWER_MARGIN_MS - Date.now());
      } catch (err) {
        const unknown = err instanceof OutcomeUnknown;
        const repeatable = err instanceof NotSent || err instanceof NoAgentToken || (unknown && opts.retrySafe);
        const pause = Math.min(REPEAT_FIRST_MS * 2 ** (attempt - 1), REPEAT_MAX_MS);
        if (repeatable && attempt < ATTEMPTS && Date.now() + pause + MIN_ATTEMPT_MS < deadline - ANSWER_MARGIN_MS) {
          await new Promise((resolve) => setTimeout(resolve, pause));
          continue;
        }
        if (unknown) throw outcomeUnknown(facts);
        throw asToolError(err);
      }
      if (!answer.ok) throw fromService(answer.status, answer.error, facts);
      return (answer.body ?? {}) as Raw;
    }
  }
}

/** A repeatable change is sent at most this often, the pauses doubling from the first to the most. */
const ATTEMPTS = 6;
const REPEAT_FIRST_MS = 200;
const REPEAT_MAX_MS = 5_000;
/** A repeat is sent only with at least this long left for it. */
const MIN_ATTEMPT_MS = 1_000;
/** Time kept at the end of a call to answer it. */
const ANSWER_MARGIN_MS = 250;

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
