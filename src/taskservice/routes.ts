import { Router, type Request } from 'express';
import { createTasks } from './create';
import { addCheckpoint } from './checkpoint';
import { deleteTask } from './delete';
import { invalidInput, parseInput } from './errors';
import { getTask } from './get';
import {
  checkpointBody,
  claimBody,
  createBody,
  deleteBody,
  eventsQuery,
  idsParams,
  listQuery,
  locateBody,
  refreshBody,
  tokenBody,
  updateBody,
} from './inputs';
import { listTasks } from './list';
import { iso, type Caller, type Store } from './store';
import { setClaim } from './claim';
import { unauthorized, type Tokens } from './tokens';
import { updateTask } from './update';

const WORKSPACE = '/api/v1/workspaces/:workspaceId';
const AGENT = `${WORKSPACE}/agents/:agentId`;
const TASKS = `${AGENT}/runtime/tasks`;
/** One page of the inspection feed; the reader asks again from the last seq. */
const EVENTS_PAGE = 1000;

function bearer(req: Request): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match ? match[1] : null;
}

/** Path ids as the token routes create them; a malformed one would be a workspace or agent nobody can name later. */
function ids(req: Request): Caller {
  const params = idsParams.safeParse(req.params);
  if (!params.success) {
    const field = String(params.error.issues[0].path[0]);
    throw invalidInput(field, `${field}: expected a letter or digit, then up to 127 letters, digits, ".", "_" or "-".`);
  }
  return { workspace: params.data.workspaceId, agent: params.data.agentId };
}

/**
 * Every route of the service. Handlers are thin: authenticate, validate,
 * call one store operation, answer. Failures are thrown and rendered by
 * the app's error handler.
 */
export function taskServiceRoutes(store: Store, tokens: Tokens): Router {
  const router = Router();
  const requireAdmin = (req: Request) => {
    if (!tokens.isAdmin(bearer(req))) throw unauthorized('The admin key is required.');
  };
  const agent = (req: Request): Caller => tokens.verify(bearer(req), String(req.params.workspaceId), String(req.params.agentId));

  router.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  router.post(`${AGENT}/tokens`, (req, res) => {
    requireAdmin(req);
    const caller = ids(req);
    const body = parseInput(tokenBody, req.body);
    res.json(tokens.issue(caller, body.channels, body.ttlSeconds));
  });

  router.post(`${AGENT}/tokens/refresh`, (req, res) => {
    const caller = ids(req);
    const body = parseInput(refreshBody, req.body);
    res.json(tokens.refresh(caller, body.refreshToken));
  });

  router.get(`${WORKSPACE}/events`, (req, res) => {
    requireAdmin(req);
    const { after = 0 } = parseInput(eventsQuery, req.query);
    const rows = store
      .sql('SELECT seq, type, channel, number, agent, at FROM events WHERE workspace = ? AND seq > ? ORDER BY seq LIMIT ?')
      .all(String(req.params.workspaceId), after, EVENTS_PAGE) as { seq: number; type: string; channel: string; number: number; agent: string; at: number }[];
    res.json({ events: rows.map((row) => ({ ...row, at: iso(row.at) })) });
  });

  router.get(TASKS, (req, res) => {
    const caller = agent(req);
    res.json(listTasks(store, caller, parseInput(listQuery, req.query)));
  });

  router.post(TASKS, (req, res) => {
    const caller = agent(req);
    const answer = createTasks(store, caller, parseInput(createBody, req.body));
    res.status(answer.reused ? 200 : 201).json(answer);
  });

  router.post(`${TASKS}/get`, (req, res) => {
    const caller = agent(req);
    const body = parseInput(locateBody, req.body);
    res.json(getTask(store, caller, body.channel, body.number));
  });

  router.post(`${TASKS}/update`, (req, res) => {
    const caller = agent(req);
    res.json(updateTask(store, caller, parseInput(updateBody, req.body)));
  });

  router.post(`${TASKS}/set-claim`, (req, res) => {
    const caller = agent(req);
    const body = parseInput(claimBody, req.body);
    res.json(setClaim(store, caller, body.channel, body.numbers, body.claimed));
  });

  router.post(`${TASKS}/add-checkpoint`, (req, res) => {
    const caller = agent(req);
    const body = parseInput(checkpointBody, req.body);
    res.status(201).json(addCheckpoint(store, caller, body.channel, body.number, body.summary));
  });

  router.post(`${TASKS}/delete`, (req, res) => {
    const caller = agent(req);
    const body = parseInput(deleteBody, req.body);
    res.json(deleteTask(store, caller, body.channel, body.number, body.subtaskMode));
  });

  return router;
}
