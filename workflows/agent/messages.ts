import type { AgentHealth } from './health';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Rules, Text } from '../../src/common/pure/content';
import type { AgentStatus, ChildRecord, InboxItem, InboxNews, SpawnMade, PlanTaskSpec, PlanTaskStatus } from '../types';
import type { AgentIdentity, LaunchSpec } from '../../src/common/launchPayload';
import type { BudgetSpent } from '../../src/common/budgets';

// Updates: the caller needs an answer, and validators keep refused input out of history.

export interface DeliverInput {
  message_id: string;
  from_agent_id: string;
  from_run_id: string;
  /** Inline, or a reference the gateway stored (src/common/pure/content.ts). */
  content: Text;
  /**
   * Set when the sender gave an idempotency key (the message id is then derived from it): a digest of the words,
   * so the key used again for other words is refused rather than answered as the first message.
   */
  fingerprint?: string;
}
/** One message's fate inside a batch: delivered (`reused` when the id was delivered before), or the spec's refusal for it. */
export type DeliveryOutcome =
  | { message_id: string; delivered: true; reused?: true; news?: InboxNews }
  | { message_id: string; delivered: false; code: string; message: string; extra: Record<string, unknown> };

/**
 * Messages for one recipient travel in batches: a gateway sends whatever
 * queued up while its previous batch was in flight, so fifty senders make
 * two or three Updates instead of fifty racing for the same workflow.
 */
export const deliverMessagesUpdate = defineUpdate<DeliveryOutcome[], [{ messages: DeliverInput[] }]>('deliverMessages');
export const MAX_DELIVERY_BATCH = 100;

export interface AckInput {
  up_to: number;
}
/** `terminated` when the agent has ended (this ack took its terminate item): the gateway retires its tokens before it answers. */
export const ackInboxUpdate = defineUpdate<{ acked_through: number; terminated?: true }, [AckInput]>('ackInbox');

/** leader_id tells the gateway whose inbox just changed (null for the root); it is not part of the tool result. */
export interface SignalReviewResult {
  recorded: true;
  review_pending: true;
  leader_id?: string | null;
}
export const signalReviewUpdate = defineUpdate<SignalReviewResult, [{ detail: Text }]>('signalReview');

export interface RequestTerminationResult {
  recorded: true;
  termination_requested: true;
  leader_id?: string | null;
}
export const requestTerminationUpdate = defineUpdate<RequestTerminationResult, [{ detail?: Text }]>('requestTermination');

export interface DeclarePlanResult {
  plan_id: string;
  plan_path: string;
  tasks: { id: string; role: string; skill: string; depends_on: string[]; status: string }[];
}
export const declarePlanUpdate = defineUpdate<DeclarePlanResult, [{ tasks: PlanTaskSpec[] }]>('declarePlan');

export const removePlanUpdate = defineUpdate<{ removed_plan_id: string }, []>('removePlan');

export interface SpawnResult {
  agent_id: string;
  team_id: string;
  task_id: string;
  remaining_ready: string[];
  team_created: boolean;
}
/**
 * Answered once the spawn is accepted, with `confirm`: the answer holds
 * when the member runs, which its step announces (types.ts, SpawnAnnounce);
 * spawnOutcome waits for the step's end and answers it, or its refusal.
 */
export const spawnAgentUpdate = defineUpdate<SpawnResult & { confirm?: true }, [{ task_id: string }]>('spawnAgent');
export const spawnOutcomeUpdate = defineUpdate<SpawnResult, [{ agent_id: string }]>('spawnOutcome');
/** The step's word that its member runs, sent before the gateway hears it: the leader records the member first. */
export const spawnStartedSignal = defineSignal<[{ key: string; made: SpawnMade }]>('spawnStarted');

export interface CreateTeamInput {
  name: string;
  task: Text;
  roles: { role: string; skill: string; model?: string; description: Text }[];
  rules?: Rules;
  consensus?: boolean;
  /**
   * What makes two calls the same call, worked out by the gateway from the
   * words sent (a retry stores its texts again, under new references).
   * Absent from older gateways: then the input itself is the key.
   */
  call_key?: string;
}
export interface CreateTeamResult {
  team_id: string;
  members: { agent_id: string; role: string }[];
}
export const createTeamUpdate = defineUpdate<CreateTeamResult, [CreateTeamInput]>('createTeam');

export const terminateChildUpdate = defineUpdate<{ sentinel_posted: true }, [{ agent_id: string; force: boolean }]>(
  'terminateChild',
);

export interface UpdatePlanTaskInput {
  task_id: string;
  status: 'done' | 'failed';
  note?: string;
}
export const updatePlanTaskUpdate = defineUpdate<
  { task_id: string; status: 'done' | 'failed'; newly_ready: string[] },
  [UpdatePlanTaskInput]
>('updatePlanTask');

// Queries: reads of state this workflow owns.

export interface InboxView {
  items: InboxItem[];
  acked_through: number;
  status: AgentStatus;
  /** What it does or waits on, and since when (workflows/agent/health.ts); absent from workers before it. */
  health?: AgentHealth;
  /** The plan it leads, each task's state and agent (no task texts: they may be long), or null without one. */
  plan?: { plan_id: string; tasks: { id: string; role: string; status: PlanTaskStatus; agent_id: string | null; depends_on: string[] }[] } | null;
}
/** Arguments are optional everywhere: a person pressing "Run Query" in the Temporal UI sends none. */
export const inboxQuery = defineQuery<InboxView, [{ after?: number; limit?: number }?]>('inbox');
export const listReadyQuery = defineQuery<{ ready: string[] } | null, []>('listReady');
export interface PendingReview {
  agent_id: string;
  role: string;
  review_pending_ts: number | null;
  age_s: number | null;
  summary: Text;
  name: string | null;
}
/** now is the caller's clock: inside a query, workflow time is the last task's time, not the present. */
export const pendingReviewsQuery = defineQuery<PendingReview[], [{ now?: number }?]>('pendingReviews');

/** For drivers of `none` runtimes: what this agent was started with (no token; the gateway mints it). */
/** What an agent is launched with; `generation` and `issuedAt` name its current token, `terminated` says there is none. */
export interface LaunchView {
  identity: AgentIdentity;
  launch: LaunchSpec;
  generation: number;
  issuedAt: number;
  terminated: boolean;
}
export const launchQuery = defineQuery<LaunchView, []>('launch');

// Signals: fire-and-forget inputs from other workflows and the runtime supervisor.

/** A direct child tells its leader what changed about it; an inbox item rides along when there is one. */
export interface ChildChange {
  agent_id: string;
  /** Numbers the child's changes: the leader keeps the newest whole mirror. Absent on an inbox item alone (a crash escalation). */
  seq?: number;
  patch: Partial<Pick<ChildRecord, 'status' | 'review_pending' | 'review_pending_ts' | 'summary' | 'termination_requested'>>;
  inbox?: { kind: 'review_report' | 'termination_request' | 'system'; content: Text; message_id: string };
}
export const childChangedSignal = defineSignal<[ChildChange]>('childChanged');

export const terminateSignal = defineSignal<[{ force: boolean }]>('terminate');

/** A message from outside the agent graph (the human gateway, the operator). */
export const systemMessageSignal = defineSignal<[{ message_id: string; content: Text }]>('systemMessage');
/**
 * The same, answered once the item is in the inbox: a caller that then wakes the agent's long poll has its inbox
 * Query answered at once, not queued behind the workflow task that applies a signal.
 */
export const systemMessageUpdate = defineUpdate<InboxNews | undefined, [{ message_id: string; content: Text }]>('putSystemMessage');

export const runtimeExitedSignal = defineSignal<[{ code: number | null; signal: string | null; stderr_tail: string[]; pid?: number }]>(
  'runtimeExited',
);

/** The model proxy found this agent (or its run) over budget: it is stopped and its leader told (workflows/agent/crash.ts). */
export const budgetSpentSignal = defineSignal<[BudgetSpent]>('budgetSpent');
/** A person answered the question about a stopped root: start it again, fresh, with their words as its next message. */
export const restartSignal = defineSignal<[{ message_id: string; content: Text }]>('restart');

export const runEndedSignal = defineSignal<[]>('runEnded');
/** The agent's leader was terminated: the whole subtree ends at once, with no grace period per level. */
export const leaderEndedSignal = defineSignal<[]>('leaderEnded');

/** The root's leader is the human: the run workflow relays the human's answer to a review or request. */
/** One of this agent's own ask_user questions opened or closed: an agent waiting on its question is not idle (watchdog pass B). */
export const askingSignal = defineSignal<[{ qid: string; open: boolean }]>('asking');
/**
 * The gateway saw a tool call of this agent (reads included, which this
 * workflow never sees): sent at most once per DIPPER_ACTIVITY_MARK_MS per
 * agent by each gateway replica, never per call.
 */
export const activitySignal = defineSignal<[]>('activity');
export const humanAnsweredSignal = defineSignal<[{ kind?: 'review' | 'termination' }?]>('humanAnswered');
