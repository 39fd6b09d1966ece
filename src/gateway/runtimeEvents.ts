import { randomUUID } from 'node:crypto';
import { Router, type Response } from 'express';
import { z } from 'zod';
import { pendingReviewsQuery } from '../../workflows/agent/messages';
import { reviewGateRefusal } from '../../workflows/agent/reviewGate';
import type { DipperEvent } from '../common/stores/eventStore';
import type { Caller } from '../registry/capabilities';
import { parseBody } from './http';
import type { TeamClient } from './teamClient';

const toolName = z.string().min(1).max(128).regex(/^[\w.:-]+$/);

/**
 * Events only a runtime sees, reported by it: the forbidden-tool hook's
 * denials (team spec, "Forbidden tools"). The set is closed and each
 * carries a tool name only, so an agent can add nothing else to the log.
 */
const reported = z.strictObject({
  type: z.enum(['disallowed_alias.denied', 'ask_user_question.redirected']),
  tool: toolName,
});

const gateAsk = z.strictObject({ tool: toolName });

/**
 * Two routes for a runtime's pre-tool hook. `/events` records what only it
 * sees. `/review-gate` decides whether the agent may use a tool Dipper does
 * not serve (a shell, a file edit) while children wait for its review: the
 * same gate, the same refusal and the same `review_gate.denied` event as
 * for Dipper's own tools, decided here rather than by the runtime. A tool
 * call let through is a sign of life for the watchdog, marked as Dipper's
 * own tools are (`mark`): the gateway sees no other trace of it.
 */
export function runtimeEventsRouter(
  append: (events: DipperEvent[]) => Promise<unknown>,
  team: TeamClient,
  callerOf: (res: Response) => Caller,
  mark: (caller: Caller) => void,
): Router {
  const router = Router();
  const event = (caller: Caller, type: string, data: Record<string, unknown>): DipperEvent => ({ event_id: randomUUID(), run_id: caller.runId, agent_id: caller.agentId, type, ts: Date.now(), data });
  router.post('/events', async (req, res) => {
    const body = parseBody(reported, req.body);
    await append([event(callerOf(res), body.type, { tool: body.tool })]);
    res.status(202).json({ recorded: true });
  });
  router.post('/review-gate', async (req, res) => {
    const { tool } = parseBody(gateAsk, req.body);
    const caller = callerOf(res);
    const pending = await team.query(team.agent(caller.runId, caller.agentId), pendingReviewsQuery, { now: Date.now() });
    if (pending.length === 0) {
      mark(caller);
      return void res.json({ allowed: true });
    }
    await append([event(caller, 'review_gate.denied', { tool, pending_reviews: pending.map((p) => p.agent_id) })]);
    res.json({ allowed: false, message: reviewGateRefusal(tool, pending).message });
  });
  return router;
}
