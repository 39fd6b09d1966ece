import { Router } from 'express';
import { z } from 'zod';
import { ackInboxUpdate, inboxQuery } from '../../workflows/agent/messages';
import type { Caller } from '../registry/capabilities';
import type { AgentStatus, InboxItem } from '../../workflows/types';
import type { ContentKeeper } from './content';
import { asHttpError, HttpError, parseBody } from './http';
import type { LongPolls } from './longPolls';
import { NotFound, type TeamClient } from './teamClient';
import type { Wakeups } from './wakeups';

const MAX_WAIT_MS = 30_000;

const pollQuery = z.strictObject({
  cursor: z.coerce.number().int().min(0).default(0),
  wait_ms: z.coerce.number().int().min(0).max(MAX_WAIT_MS).default(20_000),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const ackBody = z.strictObject({ up_to: z.number().int().min(0) });

const superseded = () =>
  new HttpError(409, 'poll_superseded', 'A newer long poll for this agent took over on this gateway; poll from one place at a time.', {
    retryable: false,
  });


/**
 * The runtime-facing inbox (not a model tool). A runtime long-polls after
 * its cursor and acknowledges what it has processed; items stay in the
 * agent's workflow until acknowledged, so a dropped connection loses nothing.
 *
 * A poll asks Temporal once (a Query), then waits for word that the inbox
 * changed: from this gateway's own deliveries, or from the shared feed
 * where the agent's workflow announces every change. Only then does it ask
 * again; a window that passes in silence answers empty without another
 * call, so an idle agent costs one Query per window. No handler waits in
 * the workflow (nothing to release before continue-as-new), and any
 * replica can serve the next poll.
 */
export function runtimeRouter(
  team: TeamClient,
  content: ContentKeeper,
  wakeups: Wakeups,
  polls: LongPolls,
  callerOf: (res: import('express').Response) => Caller,
  /** Retires an agent's tokens once an ack has ended it, before the ack is answered. */
  ended: (caller: Caller) => Promise<void>,
  /** Aborted when the gateway starts to stop: a waiting poll answers with what it has, and its runtime asks again elsewhere. */
  stopping?: AbortSignal,
): Router {
  const router = Router();

  router.get('/inbox', async (req, res) => {
    const q = parseBody(pollQuery, req.query);
    const caller = callerOf(res);
    const handle = team.agent(caller.runId, caller.agentId);
    const deadline = Date.now() + q.wait_ms;
    // Only a poll that waits holds anything; a look (wait_ms=0) neither counts nor supersedes.
    const poll = q.wait_ms > 0 ? polls.enter(`${caller.runId}/${caller.agentId}`) : undefined;
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const stop = AbortSignal.any([gone.signal, ...(poll ? [poll.signal] : []), ...(stopping ? [stopping] : [])]);
    const watch = wakeups.watch(caller.runId, caller.agentId);
    const answer = async (items: InboxItem[], cursor: number, status: AgentStatus) => {
      res.json({ messages: await content.resolve(items), next_cursor: items.at(-1)?.seq ?? cursor, status });
    };
    try {
      for (;;) {
        const view = await team.query(handle, inboxQuery, { after: q.cursor, limit: q.limit }).catch((err: unknown) => {
          if (err instanceof NotFound) throw new HttpError(404, 'unknown_agent', 'This agent no longer exists.');
          throw err;
        });
        const seen = Math.max(q.cursor, view.acked_through);
        if (view.items.length > 0 || view.status === 'terminated' || Date.now() >= deadline) return await answer(view.items, seen, view.status);
        // The agent announces every change to its inbox: it is asked again only when woken.
        const woken = await watch.next(Math.max(0, deadline - Date.now()), stop);
        // Neither a superseded poll nor one whose client left costs another Query.
        if (poll?.signal.aborted) throw superseded();
        if (gone.signal.aborted) return;
        if (!woken || stopping?.aborted) return await answer([], seen, view.status);
        // Delivered by this gateway, and known to be all that came after what the Query saw: handed over as they are.
        const handed = wakeups.deliveredAfter(caller.runId, caller.agentId, seen, q.limit);
        if (handed) return await answer(handed.items, seen, handed.status);
      }
    } finally {
      watch.close();
      poll?.leave();
    }
  });

  router.post('/inbox/ack', async (req, res) => {
    const body = parseBody(ackBody, req.body);
    const caller = callerOf(res);
    let answer: { acked_through: number; terminated?: true };
    try {
      answer = await team.update(team.agent(caller.runId, caller.agentId), ackInboxUpdate, [body]);
    } catch (err) {
      if (err instanceof NotFound) throw new HttpError(404, 'unknown_agent', 'This agent no longer exists.');
      throw asHttpError(err, 400);
    }
    // This ack ended the agent (it took the terminate item): its tokens die before it is answered, on every replica,
    // not when its workflow's own revocation gets to run. Acking again is harmless, so a failure here asks for that.
    if (answer.terminated) {
      await ended(caller).catch(() => {
        throw new HttpError(503, 'unavailable', 'Your acknowledgement was recorded, but your tokens could not be retired yet; acknowledge again.', { retryable: true });
      });
    }
    res.json({ acked_through: answer.acked_through });
  });

  router.use((_req, res) => {
    res.status(404).json({ error: { code: 'not_found', message: 'No such runtime endpoint.' } });
  });

  return router;
}
