import { wakeSignal } from '../interceptors';
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, setHandler, workflowInfo } from '@temporalio/workflow';

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

/**
 * With no cache, every refresh of every replica replays the whole history:
 * kept short, a refresh stays a few milliseconds of work. At 2000 events (a
 * day of ended runs) the replay cost grew with every run ended, four times a
 * second per replica, and on a loaded host refreshes began to miss their
 * deadline.
 */
const CONTINUE_AFTER_EVENTS = 250;

export async function tokenRegistryWorkflow(input: TokenRegistryInput): Promise<void> {
  const entries = new Map((input.entries ?? []).map((e) => [e.key, e]));
  let version = input.version ?? 0;

  setHandler(revokeSignal, (r) => {
    const key = revocationKey(r.runId, r.agentId);
    const below = r.belowGen ?? ALL_GENERATIONS;
    const known = entries.get(key);
    // A revocation only ever widens: a late, narrower one (an older relaunch) changes nothing.
    if (known && known.below >= below) return;
    version++;
    entries.set(key, { key, below, at: Math.max(r.at, known?.at ?? 0), v: version });
  });
  setHandler(wakeSignal, () => undefined);
  setHandler(
    revocationsQuery,
    (since = 0) => ({
    version,
    entries: [...entries.values()].filter((e) => e.v > since).map(({ key, below, at }) => ({ key, below, at })),
  }),
    { description: 'Revocations changed after a version: (since?: version, 0 for all).' },
  );

  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > CONTINUE_AFTER_EVENTS);
  await condition(allHandlersFinished);
  // Every token an old entry covers has expired by now (tokens live tokenTtlSeconds from their launch).
  const keepAfter = Date.now() - input.tokenTtlSeconds * 1000;
  const kept = [...entries.values()].filter((e) => e.at >= keepAfter);
  await continueAsNew<typeof tokenRegistryWorkflow>({ tokenTtlSeconds: input.tokenTtlSeconds, entries: kept, version });
}
