import { refuse } from '../errors';
import { defaultLimits } from '../../src/common/pure/limits';
import type { Limits } from '../types';

/** What the run counts for its spawn quotas; kept in its data through continue-as-new. */
export interface QuotaData {
  /** Agents reserved since the run began, beside the root: spawned, or being spawned. */
  reserved: number;
  /** Reservations whose spawn is still in progress, by id, with their size. */
  in_flight: Record<string, number>;
  /** The spawn-rate bucket: tokens left at `refilled_at` (workflow time, ms). */
  tokens: number;
  refilled_at: number;
}

/** `agents`: how many the run holds already, root included (more than one only for a run started before quotas). */
export function freshQuota(limits: Limits, agents: number, now: number): QuotaData {
  return { reserved: agents - 1, in_flight: {}, tokens: limits.spawnBurst ?? defaultLimits.spawnBurst!, refilled_at: now };
}

function tokensAt(q: QuotaData, limits: Limits, now: number): number {
  const rate = limits.spawnsPerSecond ?? defaultLimits.spawnsPerSecond!;
  const burst = limits.spawnBurst ?? defaultLimits.spawnBurst!;
  return Math.min(burst, q.tokens + ((now - q.refilled_at) / 1000) * rate);
}

/**
 * Refuses a reservation of `count` agents that would break a quota: the
 * agents the run may hold (the root counts), the spawns in flight at once,
 * the spawn rate. `agents` is how many the run holds now, root included.
 */
export function checkReservation(q: QuotaData, limits: Limits, count: number, now: number): void {
  const maxAgents = limits.maxAgentsPerRun ?? defaultLimits.maxAgentsPerRun!;
  const agents = 1 + q.reserved;
  if (agents + count > maxAgents) {
    throw refuse('quota_exceeded', `This run holds ${agents} agents and may hold ${maxAgents}; spawning ${count} more would pass it.`, {
      quota: 'agents_per_run',
      limit: maxAgents,
      current: agents,
    });
  }
  const maxInFlight = limits.maxConcurrentSpawns ?? defaultLimits.maxConcurrentSpawns!;
  const inFlight = Object.values(q.in_flight).reduce((a, b) => a + b, 0);
  if (inFlight + count > maxInFlight) {
    throw refuse('quota_exceeded', `${inFlight} spawns are in progress in this run, and at most ${maxInFlight} may be; retry when one finishes.`, {
      quota: 'concurrent_spawns',
      limit: maxInFlight,
      current: inFlight,
      retry_after_ms: 1000,
    });
  }
  const rate = limits.spawnsPerSecond ?? defaultLimits.spawnsPerSecond!;
  const burst = limits.spawnBurst ?? defaultLimits.spawnBurst!;
  if (count > burst) {
    throw refuse('quota_exceeded', `This run spawns at most ${burst} agents at once; split the team.`, { quota: 'spawn_rate', limit: burst });
  }
  const tokens = tokensAt(q, limits, now);
  if (tokens < count) {
    const waitMs = rate > 0 ? Math.ceil(((count - tokens) / rate) * 1000) : 60_000;
    throw refuse('quota_exceeded', `This run spawns at most ${rate} agents a second; retry after retry_after_ms.`, {
      quota: 'spawn_rate',
      limit: rate,
      retry_after_ms: waitMs,
    });
  }
}

export function reserve(q: QuotaData, limits: Limits, id: string, count: number, now: number): void {
  q.tokens = tokensAt(q, limits, now) - count;
  q.refilled_at = now;
  q.reserved += count;
  q.in_flight[id] = count;
}

/** The spawn ended: slots it did not use go back (a spawn that failed holds no agent). */
export function release(q: QuotaData, id: string, spawned: number): void {
  const count = q.in_flight[id];
  if (count === undefined) return;
  delete q.in_flight[id];
  q.reserved -= Math.max(0, count - spawned);
}
