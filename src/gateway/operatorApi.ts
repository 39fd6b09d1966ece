import type { InboxWakeups } from '../registry/capabilities';
import type { AgentUsage } from '../common/stores/eventStore';
import type { DecisionKeys } from '../auth/decisionKeys';
import type { AuditStore } from '../common/stores/audit';
import { approvalRoutes, auditRoutes } from './approvalsApi';
import { questionRoutes } from './questionsApi';
import { randomUUID } from 'node:crypto';
import { Router, type NextFunction, type Response } from 'express';
import { z } from 'zod';
import { buildPayload, type ReadLaunch } from '../common/launchPayload';
import type { EventStore } from '../common/stores/eventStore';
import { launchQuery } from '../../workflows/agent/messages';
import { agentName, runWorkflowId } from '../../workflows/ids';
import { cancelRunUpdate, rootDecisionUpdate, runQuery } from '../../workflows/run/messages';
import { agentRows } from './agentTree';
import { agentIdKey, roleKey, runIdKey, statusKey } from '../../workflows/searchAttributes';
import { runWorkflow } from '../../workflows/run/workflow';
import type { RunInput } from '../../workflows/run/state';
import { mayAct, type OperatorIdentity, type Role } from '../auth/operators';
import { expiryOf, mintAgentToken } from '../auth/tokens';
import { keepAfter, recordRevocation } from '../auth/revoke';
import { tokenRegistryWorkflow } from '../../workflows/tokens/registry';
import type { RevokedTokens } from '../common/stores/revokedTokens';
import { rootDecisionClaim } from '../common/pure/decisionProof';
import type { DipperConfig, Limits } from '../config';
import type { SkillCatalog } from '../skills';
import type { ContentKeeper } from './content';
import { asHttpError, HttpError, parseBody } from './http';
import { listRuns, waitingCounts } from './runList';
import type { ProcessMetrics } from '../metrics/temporalCalls';
import { NotFound, type TeamClient } from './teamClient';

const hex = () => randomUUID().replace(/-/g, '').slice(0, 12);

const startBody = z.strictObject({
  task: z.string().min(1).describe('The top-level user task; the root agent receives it as its first message.'),
  root_skill: z.string().min(1).max(128).optional(),
  root_role: z.string().min(1).max(200).optional(),
  /** Seconds until the run is cancelled; the configured default when absent, 0 for none. */
  deadline_seconds: z.number().int().min(0).max(30 * 24 * 3600).optional(),
  /** Tighter limits for this run (tests, benchmarks, cautious operators); never looser than configured. */
  limits: z
    .strictObject({
      max_depth: z.number().int().min(0).optional(),
      inbox_cap: z.number().int().min(1).optional(),
      inbox_bytes: z.number().int().min(1).optional(),
      max_plan_tasks: z.number().int().min(1).optional(),
      terminate_grace_seconds: z.number().int().min(1).optional(),
      continue_as_new_events: z.number().int().min(100).optional(),
      workspace_budget_bytes: z.number().int().min(0).optional(),
      workspace_check_seconds: z.number().int().min(1).optional(),
      max_agents: z.number().int().min(1).optional(),
      max_children_per_leader: z.number().int().min(1).optional(),
      max_concurrent_spawns: z.number().int().min(1).optional(),
      spawns_per_second: z.number().positive().optional(),
      spawn_burst: z.number().int().min(1).optional(),
      max_open_questions: z.number().int().min(1).optional(),
      review_watchdog_seconds: z.number().int().min(0).optional(),
      idle_watchdog_seconds: z.number().int().min(0).optional(),
    })
    .optional(),
});

function runLimits(base: Limits, o: z.infer<typeof startBody>['limits']): Limits {
  const tighter = (value: number | undefined, max: number) => Math.min(value ?? max, max);
  return {
    ...base,
    maxDepth: tighter(o?.max_depth, base.maxDepth),
    inboxCap: tighter(o?.inbox_cap, base.inboxCap),
    inboxBytes: tighter(o?.inbox_bytes, base.inboxBytes),
    maxPlanTasks: tighter(o?.max_plan_tasks, base.maxPlanTasks),
    terminateGraceSeconds: tighter(o?.terminate_grace_seconds, base.terminateGraceSeconds),
    continueAsNewEvents: tighter(o?.continue_as_new_events, base.continueAsNewEvents),
    workspaceBudgetBytes: tighter(o?.workspace_budget_bytes, base.workspaceBudgetBytes),
    workspaceCheckSeconds: tighter(o?.workspace_check_seconds, base.workspaceCheckSeconds),
    maxAgentsPerRun: tighter(o?.max_agents, base.maxAgentsPerRun!),
    maxChildrenPerLeader: tighter(o?.max_children_per_leader, base.maxChildrenPerLeader!),
    maxConcurrentSpawns: tighter(o?.max_concurrent_spawns, base.maxConcurrentSpawns!),
    spawnsPerSecond: tighter(o?.spawns_per_second, base.spawnsPerSecond!),
    spawnBurst: tighter(o?.spawn_burst, base.spawnBurst!),
    maxOpenQuestions: tighter(o?.max_open_questions, base.maxOpenQuestions!),
    // Not a bound on the run but how closely it is watched: a run may ask for its own (0 turns a pass off).
    reviewWatchdogSeconds: o?.review_watchdog_seconds ?? base.reviewWatchdogSeconds,
    idleWatchdogSeconds: o?.idle_watchdog_seconds ?? base.idleWatchdogSeconds,
  };
}

/** The warning comes at most a tenth of the run's time early, so a short run is not warned at its start. */
function deadlineOf(seconds: number, warning: number): Pick<RunInput, 'deadlineSeconds' | 'deadlineWarningSeconds'> {
  if (seconds <= 0) return {};
  return { deadlineSeconds: seconds, deadlineWarningSeconds: Math.min(warning, seconds / 10) };
}

const decisionBody = z.strictObject({
  kind: z.enum(['review', 'termination']),
  verdict: z.enum(['approve', 'rework']),
  text: z.string().max(256 * 1024).optional(),
});

const cancelBody = z.strictObject({ reason: z.string().min(1).max(2000).optional() });

const eventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  type: z.string().max(100).optional(),
  format: z.enum(['json', 'jsonl']).default('json'),
});

const RUN_ID = /^run_[a-f0-9]{12}$/;
const AGENT_ID = /^ag_[a-f0-9]{12}$/;

function runIdOf(value: string): string {
  if (!RUN_ID.test(value)) throw new HttpError(404, 'unknown_run', 'No such run.');
  return value;
}

/** The root's token is only useful once its workflow runs; the run reports that within a few tasks. */
async function untilRootReady(team: TeamClient, runId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const view = await team.query(team.run(runId), runQuery).catch(() => null);
    if (view?.root_ready) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new HttpError(503, 'run_not_ready', 'The run did not start in time; is a worker running?');
}

export interface OperatorDeps {
  config: DipperConfig;
  tokenSecret: string;
  team: TeamClient;
  skills: SkillCatalog;
  events: EventStore;
  /** Revocations written before an answer makes them true (the run's revoke, a relaunch's token). */
  revoked: RevokedTokens;
  content: ContentKeeper;
  metrics: ProcessMetrics;
  /** The iSphere audit chain and its key, for listing and verifying it. */
  audit: { store: AuditStore; key: string };
  /** Signs the decisions people make (src/common/pure/decisionProof.ts). */
  decisions: DecisionKeys;
  /** Wakes the calls of this process that wait on a question a person has just closed. */
  wakeups: InboxWakeups;
}

/** Refuses an operator whose role is below what the route needs (src/auth/operators.ts). */
function needs(role: Role) {
  return (_req: unknown, res: Response, next: NextFunction): void => {
    const who = res.locals.operator as OperatorIdentity;
    if (mayAct(who, role)) return next();
    throw new HttpError(403, 'forbidden', `Operator "${who.name}" is a ${who.role}; this needs ${role === 'admin' ? 'an admin' : `an ${role}`}.`);
  };
}

/** The operator API: start runs, watch them, answer for the root's human. Operators' tokens only; each route names the role it needs. */
export function operatorRouter(deps: OperatorDeps): Router {
  const { config, team } = deps;
  const router = Router();
  const notFound = (err: unknown): never => {
    if (err instanceof NotFound) throw new HttpError(404, 'unknown_run', 'No such run.');
    throw err;
  };
  const agentUrls = { mcp_url: `${config.publicUrl}/mcp/beidou`, inbox_url: `${config.publicUrl}/api/runtime/inbox` };

  router.post('/runs', needs('admin'), async (req, res) => {
    const body = parseBody(startBody, req.body);
    if (Buffer.byteLength(body.task) > config.limits.maxContentBytes) {
      throw new HttpError(400, 'invalid_input', `task is larger than ${config.limits.maxContentBytes} bytes.`, { field: 'task' });
    }
    const skill = body.root_skill ?? 'lead';
    if (body.root_skill && !(await deps.skills.exists(skill))) {
      throw new HttpError(400, 'unknown_skill', `Skill "${skill}" has no SKILL.md.`, { field: 'root_skill' });
    }
    const runId = `run_${hex()}`;
    const agentId = `ag_${hex()}`;
    const role = body.root_role ?? 'root';
    const input: RunInput = {
      runId,
      // Every agent of the run carries the task: a long one is stored once and referred to.
      task: await deps.content.keep(runId, body.task),
      root: { agentId, name: agentName(role, agentId), role, skill },
      limits: runLimits(config.limits, body.limits),
      humanGateway: config.questions.humanGateway,
      decisionKeys: deps.decisions.publicKeys,
      ...deadlineOf(body.deadline_seconds ?? config.runDeadlineSeconds, config.runDeadlineWarningSeconds),
    };
    await team.bounded('start run', () => team.temporal.start(runWorkflow, {
      taskQueue: config.temporal.taskQueue,
      workflowId: runWorkflowId(runId),
      args: [input],
      // For the run list: visibility returns the memo with each run, so listing wakes no workflow.
      memo: { task: body.task.length > 200 ? `${body.task.slice(0, 199)}…` : body.task },
      // Read in the Temporal UI's workflow list and page.
      staticSummary: `Run: ${body.task.length > 120 ? `${body.task.slice(0, 119)}…` : body.task}`,
      staticDetails: `**Task:** ${body.task.length > 2000 ? `${body.task.slice(0, 1999)}…` : body.task}  \n**Root:** ${role} (${agentId}), skill ${skill}`,
      typedSearchAttributes: [
        { key: runIdKey, value: runId },
        { key: agentIdKey, value: agentId },
        { key: roleKey, value: 'run' },
        { key: statusKey, value: 'active' },
      ],
    }));
    await untilRootReady(team, runId);
    res.status(201).json({
      run_id: runId,
      workflow_id: runWorkflowId(runId),
      root: {
        agent_id: agentId,
        name: input.root.name,
        // The root's first launch (generation 1); a runtime it is launched with gets that generation too.
        agent_token: mintAgentToken(deps.tokenSecret, { run_id: runId, agent_id: agentId, gen: 1, exp: expiryOf(Date.now(), config.tokenTtlSeconds) }),
        ...agentUrls,
      },
    });
  });

  // Prometheus text: what this replica asks Temporal, by method.
  router.get('/metrics', needs('viewer'), async (_req, res) => {
    res.type('text/plain; version=0.0.4').send(await deps.metrics.text());
  });

  router.get('/runs', needs('viewer'), async (req, res) => {
    res.json(await listRuns(team, req.query));
  });

  // What waits for people, everywhere: the console's counters on every page.
  router.get('/waiting', needs('viewer'), async (_req, res) => {
    res.json(await waitingCounts(team));
  });

  router.post('/runs/:runId/cancel', needs('admin'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    const body = parseBody(cancelBody, req.body ?? {});
    const who = res.locals.operator as OperatorIdentity;
    const out = await team.update(team.run(runId), cancelRunUpdate, [{ by: who.name, reason: body.reason ?? 'cancelled by an operator' }]).catch(async (err: unknown) => {
      // A run that has already ended takes no Update; it still answers how it ended.
      if (!(err instanceof NotFound)) throw err;
      const view = await team.query(team.run(runId), runQuery).catch(notFound);
      return { run_status: view.status };
    });
    // Its agents are stopped one by one after this; their tokens stop working before the answer, not as each ends.
    if (out.run_status === 'cancelled') await team.bounded('revoke tokens', () => recordRevocation(team.temporal, tokenRegistryWorkflow, config, deps.revoked, { runId, at: Date.now() }));
    res.json({ run_id: runId, status: out.run_status });
  });

  router.get('/runs/:runId', needs('viewer'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    const view = await deps.content.resolve(await team.query(team.run(runId), runQuery).catch(notFound));
    res.json({ ...view, model_usage: usageView(await deps.events.modelUsage(runId)) });
  });

  // The agent tree: directory entries with leader, depth and inbox depth.
  router.get('/runs/:runId/agents', needs('viewer'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    res.json({ agents: await agentRows(team, runId).catch(notFound) });
  });

  router.get('/runs/:runId/agents/:agentId/launch', needs('admin'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    const agentId = req.params.agentId;
    if (!AGENT_ID.test(agentId)) throw new HttpError(404, 'unknown_agent', 'No such agent.');
    const spec = await team.query(team.agent(runId, agentId), launchQuery).catch((err: unknown) => {
      if (err instanceof NotFound) throw new HttpError(404, 'unknown_agent', 'No such agent.');
      throw err;
    });
    // An ended agent has no valid token to hand out; minting one would bring it back.
    if (spec.terminated) throw new HttpError(409, 'agent_terminated', 'The agent has been terminated; it has no launch.');
    const body = (await deps.skills.load(spec.identity.skill)) ?? '';
    // The older generations die before this one's token exists: the agent's own revocation of them may still be on its
    // way (its workflow shows the new generation as soon as it counts it, before its revokeTokens activity has run).
    if (spec.generation > 1) {
      await deps.revoked.record({ runId, agentId, belowGen: spec.generation, at: Date.now() }, keepAfter(config));
    }
    // The current launch's token: the same one on every call, until the agent is launched again.
    const payload = buildPayload(
      {
        publicUrl: config.publicUrl,
        tokenSecret: deps.tokenSecret,
        tokenTtlSeconds: config.tokenTtlSeconds,
        skillNames: await deps.skills.names(),
        taskBoards: true,
        maxDepth: config.limits.maxDepth,
      },
      spec.identity,
      (await deps.content.resolve(spec.launch)) as ReadLaunch,
      body,
      'first',
      { gen: spec.generation, issuedAt: spec.issuedAt },
    );
    res.json(payload);
  });

  router.post('/runs/:runId/tokens/revoke', needs('admin'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    await team.query(team.run(runId), runQuery).catch(notFound);
    await team.bounded('revoke tokens', () => recordRevocation(team.temporal, tokenRegistryWorkflow, config, deps.revoked, { runId, at: Date.now() }));
    res.json({ run_id: runId, revoked: 'every token of the run' });
  });

  router.post('/runs/:runId/root/decision', needs('approver'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    const body = parseBody(decisionBody, req.body);
    try {
      const who = res.locals.operator as OperatorIdentity;
      // The root keeps the words in its inbox until it reads them: a long text is stored, as an agent's message is.
      const text = body.text === undefined ? undefined : await deps.content.keep(runId, body.text);
      const decision = { ...body, ...(text === undefined ? {} : { text }), operator: who.name };
      // Signed for the report it decides, so the signature cannot decide a later one.
      const report = (await team.query(team.run(runId), runQuery)).pending_root.find((r) => r.kind === body.kind);
      const proof = report && deps.decisions.prove(rootDecisionClaim(runId, report, decision, Date.now()));
      res.json(await deps.content.around([text], () => team.update(team.run(runId), rootDecisionUpdate, [{ ...decision, ...(proof ? { proof, report_ts: report.ts } : {}) }])));
    } catch (err) {
      notFound(asHttpError(err, 409));
    }
  });

  questionRoutes(router, team, deps.content, deps.decisions, deps.wakeups, needs);
  approvalRoutes(router, team, deps.decisions, deps.content, deps.events, needs);
  auditRoutes(router, deps.audit, deps.events, needs);

  router.get('/runs/:runId/events', needs('viewer'), async (req, res) => {
    const runId = runIdOf(req.params.runId);
    const q = parseBody(eventsQuery, req.query);
    // Reports and requests refer to their long details; an event reads whole, as it was recorded.
    const events = await deps.content.resolve(await deps.events.list(runId, q));
    if (q.format === 'jsonl') {
      res.type('application/x-ndjson').send(events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : ''));
      return;
    }
    res.json({ events, next_after: events.at(-1)?.seq ?? q.after });
  });

  return router;
}

/** The run's model cost: per agent, and the sum (model.usage events, written by the model proxy). */
function usageView(agents: AgentUsage[]) {
  const total = agents.reduce((t, a) => ({ requests: t.requests + a.requests, input_tokens: t.input_tokens + a.input_tokens, output_tokens: t.output_tokens + a.output_tokens }), {
    requests: 0,
    input_tokens: 0,
    output_tokens: 0,
  });
  return { total, by_agent: agents };
}
