import type { QueryDefinition, UpdateDefinition, Workflow } from '@temporalio/common';
import type { DeliverInput, DeliveryOutcome } from '../../workflows/agent/messages';
import type { InboxItem, InboxNews } from '../../workflows/types';
import type { Text } from '../common/pure/content';
import type { TaskOp } from '../common/taskApi/client';
import type { StartOptions, WorkflowRef } from '../temporal';

/**
 * What the tools need from the process that serves them, one capability
 * each. The gateway implements them (src/gateway: TeamClient,
 * DeliveryBatcher, ContentKeeper, Wakeups, TaskBoard) and wires them into
 * each call's ToolContext; a test can hand a tool a fake of just the one it
 * uses. The registry names no gateway class.
 */

/** Who is calling, taken from the bearer token and never from tool input. */
export interface Caller {
  runId: string;
  agentId: string;
}

/** The run's workflows, each call bounded by the tool call's deadline and its failures named in the tool codes. */
export interface TeamWorkflows {
  /** The bound on a call made outside any tool call's deadline. */
  readonly callTimeoutMs: number;
  agent(runId: string, agentId: string): WorkflowRef;
  run(runId: string): WorkflowRef;
  /** Any other workflow of a run (a question, an approval), by its id. */
  handle<W extends Workflow = Workflow>(workflowId: string): WorkflowRef<W>;
  /** An Update, retried under one id while the server says it was never applied. */
  update<Ret, Args extends unknown[]>(handle: WorkflowRef, def: UpdateDefinition<Ret, Args>, args: Args, updateId?: string): Promise<Ret>;
  query<Ret, Args extends unknown[]>(handle: WorkflowRef, def: QueryDefinition<Ret, Args>, ...args: Args): Promise<Ret>;
  /** Any other Temporal call, with the same bound and the same failures. */
  bounded<T>(what: string, fn: () => Promise<T>, workflowId?: string, capMs?: number): Promise<T>;
  /** Starts a workflow (a question, a file operation); unbounded: wrap it in `bounded`. */
  start<W extends Workflow>(workflow: W, options: StartOptions<W>): Promise<WorkflowRef<W>>;
  /** The run an agent id belongs to; used only to explain a failed lookup. */
  runOfAgent(agentId: string): Promise<string | null>;
}

/** send_message's delivery into the recipient's inbox (batched per recipient by the gateway). */
export interface MessageDelivery {
  deliver(runId: string, to: string, input: DeliverInput): Promise<DeliveryOutcome>;
}

/** Where long text goes before an Update, and comes back from after a read. */
export interface ContentKeeping {
  keep(runId: string, text: string): Promise<Text>;
  /** Like `keep` for several texts of one call: equal texts are kept once. */
  keeper(runId: string): { keep: (text: string) => Promise<Text>; kept: Text[] };
  forget(...texts: (Text | undefined)[]): Promise<void>;
  /** Runs the call with text kept for it, and drops the text when the call was refused. */
  around<T>(texts: (Text | undefined)[], call: () => Promise<T>): Promise<T>;
  /** A copy of `value` with every stored text replaced by its words. */
  resolve<T>(value: T): Promise<T>;
}

/** One poll's view of an agent's wakes since it began watching. */
export interface Watch {
  /** Resolves true once the agent was woken since the last call (at once if it already was), false after ms or when the signal aborts. */
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

/** Word to the long polls of this process that an agent's inbox changed. */
export interface InboxWakeups {
  wake(runId: string, agentId: string): void;
  /** A wake that carries what happened (a question's end), for waiters of this process to read instead of asking Temporal. */
  hand(runId: string, key: string, news: unknown): void;
  /** What was last handed for this key in the past minute, if anything. */
  handed(runId: string, key: string): unknown;
  /** Runs call and hands what newsOf makes of its result (or, given nothing, wakes); until then, coming() waits for it. */
  bring<T>(runId: string, key: string, call: () => Promise<T>, newsOf: (result: T) => unknown): Promise<T>;
  /** Settles once every call bringing news for this key has (at once when none is). */
  coming(runId: string, key: string): Promise<void>;
  /** Starts counting wakes for one agent, before the caller looks, so none slips between look and wait. */
  watch(runId: string, agentId: string): Watch;
  /** Wakes the agent with items a delivery of this process just put into its inbox, as the delivery answered them. */
  delivered(runId: string, agentId: string, items: HandedItem[]): void;
}

/** An inbox item this process delivered, with what its delivery answered about it. */
export interface HandedItem {
  item: InboxItem;
  news: InboxNews;
}

/** What a task call is about, for its refusals' hints. */
export interface CallAbout {
  channel?: string;
  number?: number;
}

/** The task board (agentteam tools): reads straight to the Task API, changes through a short workflow. */
export interface TaskBoardAccess {
  /** The answer's byte budget (DIPPER_TASK_RESULT_BUDGET_BYTES). */
  readonly budgetBytes: number;
  read(caller: Caller, op: TaskOp, body: Record<string, unknown>, about: CallAbout): Promise<Record<string, unknown>>;
  mutate(caller: Caller, op: TaskOp, body: Record<string, unknown>, opts: { tool: string; key?: string; retrySafe: boolean; about: CallAbout }): Promise<Record<string, unknown>>;
}
