import { randomUUID } from 'node:crypto';
import { pendingReviewsQuery } from '../../workflows/agent/messages';
import { REVIEW_GATE_ALLOWED, reviewGateRefusal } from '../../workflows/agent/reviewGate';
import { ToolError } from '../common/toolErrors';
import type { ToolContext, ToolDef } from '../registry/types';

/**
 * Where a tool's review gate is checked. Beidou's calls that change the
 * leader are checked by its own workflow, in the Update's validator (no
 * round trip, and durable like the call: an Update waits out a worker
 * restart where a Query would fail). Reads, and every tool of a later
 * surface, are checked here.
 */
export function gateOf(def: ToolDef): 'none' | 'workflow' | 'gateway' {
  if (def.surface === 'bench' || (def.surface === 'beidou' && REVIEW_GATE_ALLOWED.includes(def.name))) return 'none';
  return def.surface === 'beidou' && !def.readOnly ? 'workflow' : 'gateway';
}

/**
 * Refuses the call when the caller has children waiting for its review,
 * naming them and the tools it may use, and records `review_gate.denied`.
 * One Query on the caller's own workflow, whose mirror of its children is
 * updated inside each child's signal_review, so a report just made closes
 * the gate for the leader's very next call.
 */
export async function checkReviewGate(def: ToolDef, ctx: ToolContext): Promise<void> {
  const pending = await ctx.team.query(ctx.team.agent(ctx.caller.runId, ctx.caller.agentId), pendingReviewsQuery, { now: Date.now() });
  if (pending.length === 0) return;
  const refusal = reviewGateRefusal(def.name, pending);
  throw new ToolError(refusal.type!, refusal.message, (refusal.details?.[0] ?? {}) as Record<string, unknown>);
}

/** Every refusal by the gate, wherever it was checked, is an event. */
export function recordGateDenied(ctx: ToolContext, tool: string, extra: Record<string, unknown>): void {
  const pending = Array.isArray(extra.pending_reviews) ? (extra.pending_reviews as { agent_id: string }[]).map((p) => p.agent_id) : [];
  ctx.recordEvent?.({
    event_id: randomUUID(),
    run_id: ctx.caller.runId,
    agent_id: ctx.caller.agentId,
    type: 'review_gate.denied',
    ts: Date.now(),
    data: { tool, pending_reviews: pending },
  });
}
