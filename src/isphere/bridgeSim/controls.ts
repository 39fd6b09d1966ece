import express, { Router } from 'express';
import { requireBearer } from './auth';
import { parseInput } from './errors';
import { receive } from './inbound';
import { configBody, emptyBody, faultBody, inboundBody, sessionBody } from './inputs';
import type { SimState } from './state';

/**
 * /_sim/: what a test or the demo does to the world around the bridge. Only
 * the control token opens it, never the bridge token, so a connector cannot
 * log the person out or plan its own faults.
 */
export function controlRoutes(state: SimState, controlToken: string, now: () => number): Router {
  const router = Router();
  router.use(requireBearer(controlToken, 'simulator control token'), express.json({ limit: '1mb' }));

  router.post('/messages', (req, res) => {
    res.status(201).json(receive(state, parseInput(inboundBody, req.body), now()));
  });

  router.post('/session', (req, res) => {
    state.loggedIn = parseInput(sessionBody, req.body).logged_in;
    res.json({ logged_in: state.loggedIn });
  });

  router.post('/config', (req, res) => {
    state.dedupe = parseInput(configBody, req.body).dedupe;
    res.json({ dedupe: state.dedupe });
  });

  router.post('/faults', (req, res) => {
    state.faults.plan(parseInput(faultBody, req.body));
    res.json({ faults: state.faults.list() });
  });

  router.get('/deliveries', (_req, res) => {
    res.json({ deliveries: state.deliveries });
  });

  router.post('/reset', (req, res) => {
    parseInput(emptyBody, req.body);
    state.reset();
    res.json({ reset: true });
  });

  return router;
}
