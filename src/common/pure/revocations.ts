import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * Which agent tokens no longer hold, for every gateway replica of a task
 * queue. Tokens are signed and checked without a lookup; this list is the
 * exception, kept small: a replica loads it whole once, then asks for what
 * changed since the version it has (src/gateway/revocations.ts).
 */
export interface Revocation {
  runId: string;
  /** Absent: every token of the run. */
  agentId?: string;
  /** Tokens of generations below this are refused; absent: every generation. */
  belowGen?: number;
  /** When it was recorded (ms since the epoch): entries are dropped once every token they cover has expired. */
  at: number;
}

/** `run_…` for a whole run, `run_…/ag_…` for one agent; `below` of ALL_GENERATIONS refuses every generation. */
export interface RevokedEntry {
  key: string;
  below: number;
  at: number;
}

export interface RevocationsView {
  version: number;
  /** Entries changed after the version asked for (all of them when asked for 0). */
  entries: RevokedEntry[];
}

export interface TokenRegistryInput {
  tokenTtlSeconds: number;
  entries?: (RevokedEntry & { v: number })[];
  version?: number;
}

export const ALL_GENERATIONS = Number.MAX_SAFE_INTEGER;
export const revokeSignal = defineSignal<[Revocation]>('revoke');
export const revocationsQuery = defineQuery<RevocationsView, [number?]>('revocations');

/** One registry per task queue: a test stack's gateways never depend on another stack's worker. */
export function tokenRegistryId(taskQueue: string): string {
  return `tokens/${taskQueue}`;
}

/**
 * The registry runs on a task queue of its own, polled by every worker with
 * no workflow cache, so it is never sticky to one worker: its Queries are
 * answered by whichever worker is alive. On the main queue, a killed worker
 * held every gateway's refresh for the sticky timeout and more, and gateways
 * (failing closed) refused every agent for seconds after agents themselves
 * had recovered. Its name holds a '/', which no configured task queue may
 * (src/config.ts): as `<queue>-tokens` it was the main queue of a deployment
 * named so, whose run workflows the other's uncached worker then took.
 */
export function tokenRegistryQueue(taskQueue: string): string {
  return `${taskQueue}/token-registry`;
}

export const revocationKey = (runId: string, agentId?: string): string => (agentId ? `${runId}/${agentId}` : runId);
