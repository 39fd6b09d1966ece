import { setTimeout as sleep } from 'node:timers/promises';
import type { Request, RequestHandler, Response } from 'express';
import { BridgeError } from './errors';
import type { RouteGroup } from './faults';
import type { SimState } from './state';
import type { StoredFile } from './world';

export type Reply = { status: number; json: unknown } | { file: StoredFile };

/**
 * Runs a data route (after authentication and body parsing): consults the
 * planned faults, refuses when nobody is logged in, then answers. `fail`
 * answers before anything happens; `delay` waits and then does the work even
 * if the caller gave up meanwhile, as a slow bridge would; `accept_then_drop`
 * does the work and closes the connection without a byte of answer;
 * `accept_then_hang` does the work and never answers.
 */
export function dataRoute(state: SimState, group: RouteGroup | null, handle: (req: Request) => Reply): RequestHandler {
  return async (req: Request, res: Response) => {
    const fault = group === null ? null : state.faults.take(group);
    if (fault?.mode === 'fail') throw new BridgeError(503, 'bridge_unavailable', 'The bridge cannot reach the iSphere client right now.');
    if (fault?.mode === 'delay') await sleep(fault.delay_ms ?? 0, undefined, { ref: false });
    let reply: Reply | null = null;
    let failure: unknown = null;
    try {
      if (!state.loggedIn) throw new BridgeError(409, 'not_logged_in', 'Nobody is logged in to the iSphere client.');
      reply = handle(req);
    } catch (err) {
      failure = err;
    }
    if (fault?.mode === 'accept_then_drop') {
      res.socket?.destroy();
      return;
    }
    // Done, and never answered: the caller waits until it gives up (or dies), as with a bridge that hung after the work.
    if (fault?.mode === 'accept_then_hang') return;
    if (failure !== null) throw failure;
    // The caller (or the server's close) may have ended the connection during a delay.
    if (req.socket.destroyed || reply === null) return;
    if ('file' in reply) {
      const { meta, bytes } = reply.file;
      res.status(200).set({ 'content-type': 'application/octet-stream', 'content-length': String(bytes.length), 'x-sha256': meta.sha256 });
      res.end(bytes);
    } else {
      res.status(reply.status).json(reply.json);
    }
  };
}
