import { randomUUID } from 'node:crypto';
import { Router, type Response } from 'express';
import { z } from 'zod';
import type { DipperEvent } from '../../workflows/types';
import type { Caller } from '../registry/capabilities';
import { parseBody } from './http';

/**
 * Events only a runtime sees, reported by it: the forbidden-tool hook's
 * denials (team spec, "Forbidden tools"). The set is closed and each
 * carries a tool name only, so an agent can add nothing else to the log.
 */
const reported = z.strictObject({
  type: z.enum(['disallowed_alias.denied', 'ask_user_question.redirected']),
  tool: z.string().min(1).max(128).regex(/^[\w.:-]+$/),
});

export function runtimeEventsRouter(append: (events: DipperEvent[]) => Promise<unknown>, callerOf: (res: Response) => Caller): Router {
  const router = Router();
  router.post('/events', async (req, res) => {
    const body = parseBody(reported, req.body);
    const caller = callerOf(res);
    await append([{ event_id: randomUUID(), run_id: caller.runId, agent_id: caller.agentId, type: body.type, ts: Date.now(), data: { tool: body.tool } }]);
    res.status(202).json({ recorded: true });
  });
  return router;
}
