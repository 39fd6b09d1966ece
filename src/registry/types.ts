import type { z } from 'zod';
import type { DipperEvent } from '../common/stores/eventStore';
import type { Limits } from '../config';
import type { SkillCatalog } from '../skills';
import type { IsphereService } from '../isphere/service';
import type { Caller, ContentKeeping, InboxWakeups, MessageDelivery, TaskBoardAccess, TeamWorkflows } from './capabilities';

/**
 * Everything a tool's handler may use, built by the gateway for each call:
 * the caller, the capabilities it implements (capabilities.ts), and the
 * call's settings.
 */
export interface ToolContext {
  caller: Caller;
  /** The run's workflows (every tool's one Update, Query or start). */
  team: TeamWorkflows;
  delivery: MessageDelivery;
  content: ContentKeeping;
  wakeups: InboxWakeups;
  skills: SkillCatalog;
  limits: Limits;
  /** The task board (agentteam tools): reads straight to the Task API, mutations through a short workflow. */
  tasks?: TaskBoardAccess;
  /** The isphere tools' own engine (src/isphere: sources, access policy, approvals, budget); the isphere surface only. */
  isphere?: IsphereService;
  /** How questions (ask_user) are held: whether a human gateway takes them, how long an answer waits for a re-issued call. */
  questions: { humanGateway: boolean; reattachMs: number; progressMs: number; taskQueue: string; decisionKeys: string[] };
  /** For tools that wait: tells the client the call is still alive (when it sent a progress token). */
  progress?: (message: string) => Promise<void>;
  /** Aborts when the client has gone. */
  signal?: AbortSignal;
  /** The caller made a tool call: its watchdog's clock is marked (debounced; src/gateway/activityMarks.ts). */
  activity?: () => void;
  /** Counts a call of a deprecated tool (section 11.3 usage telemetry). */
  countDeprecated?: (tool: string) => void;
  /** Counts the answered call for the process's metrics (surface, tool, outcome, seconds). */
  recordCall?: (surface: string, tool: string, outcome: string, seconds: number) => void;
  /** Check every result against the tool's output schema (DIPPER_CHECK_OUTPUTS; test stacks). */
  checkOutput?: boolean;
  /** Appends an event the gateway itself observes (review_gate.denied); not awaited by the call. */
  recordEvent?: (event: DipperEvent) => void;
}

/** `bench` holds only the no-op floor of `npm run bench`; it is served when config.benchSurface is set. */
export type Surface = 'beidou' | 'agentteam' | 'isphere' | 'bench';

/** One tool, declared once as data. MCP definitions, annotations and docs are built from it. */
export interface ToolDef<In extends z.ZodObject = z.ZodObject, Out = unknown> {
  name: string;
  surface: Surface;
  owner: 'team-orchestration' | 'task-board' | 'isphere-messaging' | 'bench';
  title: string;
  description: string;
  permission: 'read_only' | 'agent_mutation' | 'destructive';
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  /** Context Dipper injects after parsing; never a model field. */
  hiddenContext: readonly ('caller_agent_id' | 'run_id' | 'workspace_id')[];
  /**
   * How a repeat of the call behaves (contract section 7): a read or a
   * desired-state setter repeats harmlessly, a keyed create or a call with
   * a receipt answers what the first one did; `none`: a repeat happens
   * again, or is refused by the owner as already done.
   */
  idempotency?: 'read' | 'desired_state' | 'idempotency_key' | 'call_receipt' | 'none';
  /** How a stale overwrite is prevented: an expected revision, the owning workflow's own ordering, or not applicable. */
  concurrency?: 'expected_updated_at' | 'owner_serialized' | 'none';
  /** Result budget class (section 8.3): `standard` is the configured byte budget (DIPPER_TASK_RESULT_BUDGET_BYTES); absent: bounded by its schema's limits only. */
  resultBudget?: 'standard';
  deprecated?: {
    replacement: string;
    /** How it stays callable until it goes (contract 11.3): whether it is listed, what a call gets. */
    callable?: string;
    /** What must be true before it is removed: a gate, not a date. */
    removalGate?: string;
  };
  /** The call waits for something outside the caller (a person): no call timeout, progress while it waits. */
  waits?: boolean;
  /** The spec's error codes this tool answers with (isphere: its contract's `Errors:` line, plus recorded additions). */
  errorCodes?: readonly string[];
  /** Fields that get their own error code instead of invalid_input when present (e.g. leader_id). */
  refusedFields?: Record<string, { code: string; message: string }>;
  input: In;
  output: z.ZodType<Out>;
  handler: (input: z.infer<In>, ctx: ToolContext) => Promise<Out>;
}

export function defineTool<In extends z.ZodObject, Out>(def: ToolDef<In, Out>): ToolDef<In, Out> {
  return def;
}
