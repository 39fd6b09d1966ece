import path from 'node:path';
import type { ServerResponse } from 'node:http';
import express, { Router } from 'express';
import type { Operators } from '../auth/operators';
import type { DipperConfig } from '../config';
import { bearer, unauthorized } from './http';

/** The page's files: plain HTML, CSS and modules, served as they are (no build step). */
const FILES = path.join(__dirname, '..', 'console');

/**
 * Nothing but the console's own files may run, load or be framed: a
 * model's words that slipped into the DOM as markup still could not run a
 * script or send the token anywhere (connect-src 'self').
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function guard(res: ServerResponse, html: boolean): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Assets may be kept, but are checked again (their ETag) on each load, so an upgraded gateway serves its own.
  res.setHeader('Cache-Control', html ? 'no-store' : 'no-cache');
}

/**
 * The operator console at /console, and `GET /api/console`: who is signed
 * in and where the Temporal UI is. Mounted before the operator API, behind
 * the Origin check; the route checks the operator's token itself (any role).
 */
export function consoleRoutes(deps: { config: DipperConfig; operators: Operators }): Router {
  const router = Router();
  router.get('/api/console', (req, res) => {
    const token = bearer(req);
    const who = token ? deps.operators.identify(token) : undefined;
    if (!who) return unauthorized(res);
    res.set('Cache-Control', 'no-store').json({
      operator: { name: who.name, role: who.role },
      namespace: deps.config.temporal.namespace,
      temporal_ui_url: deps.config.temporalUiUrl,
    });
  });
  // Matches /console/ too; the page names its assets by absolute path, so either address works.
  router.get('/console', (_req, res, next) => {
    guard(res, true);
    res.sendFile(path.join(FILES, 'index.html'), (err) => err && next(err));
  });
  router.use(
    '/console',
    express.static(FILES, { index: false, redirect: false, setHeaders: (res, file) => guard(res, file.endsWith('.html')) }),
  );
  return router;
}
