import type { DecisionKeys } from '../auth/decisionKeys';
import { decideApproval } from './decisions';
import type { RequestHandler, Router } from 'express';
import fs from 'node:fs';
import { ANCHOR_EVENT, FileWitness, verifyAudit, type Anchor, type AuditEntry, type AuditRow, type AuditStore } from '../common/stores/audit';
import type { EventStore } from '../common/stores/eventStore';
import { z } from 'zod';
import { isphereApprovalWorkflow } from '../../workflows';
import { approvalWorkflowId } from '../../workflows/ids';
import { typeIs } from '../temporal';
import { approvalQuery, type ApprovalView } from '../../workflows/isphere/messages';
import type { OperatorIdentity } from '../auth/operators';
import type { ContentKeeper } from './content';
import { underDeadline } from './deadline';
import { asHttpError, HttpError, parseBody } from './http';
import { NotFound, type TeamClient } from './teamClient';

const RUN_ID = /^run_[a-f0-9]{12}$/;
const APPROVAL_ID = /^apr_[A-Za-z0-9_-]{1,64}$/;
/** How long the list waits for any one approval's record. */
const LIST_READ_MS = 2000;

const listQuery = z.strictObject({
  run: z.string().regex(RUN_ID).optional(),
  status: z.enum(['pending', 'approved', 'sending', 'all']).default('pending'),
  page_size: z.coerce.number().int().min(1).max(50).default(50),
});
/**
 * No `via` in the body: the channel the audit records is the one the gateway saw (this route: the operator API, with
 * an operator's token), never one the caller claims. The console signs in with the same token, so it is `api` too.
 */
const approveBody = z.strictObject({});
const rejectBody = z.strictObject({ reason: z.string().trim().min(1).max(4000) });

/**
 * iSphere send approvals on the operator API: what waits for a person (with
 * the exact words or file it would send), each approval's record, and the
 * person's decision (approver role; the operator's name is recorded).
 */
export function approvalRoutes(
  router: Router,
  team: TeamClient,
  decisions: DecisionKeys,
  content: ContentKeeper,
  events: EventStore,
  needs: (role: 'viewer' | 'approver' | 'admin') => RequestHandler,
): void {
  const handleOf = (runId: string, id: string) => {
    if (!RUN_ID.test(runId) || !APPROVAL_ID.test(id)) throw new HttpError(404, 'unknown_approval', 'No such approval.');
    return team.handle(approvalWorkflowId(runId, id));
  };
  const missing = (err: unknown): never => {
    if (err instanceof NotFound) throw new HttpError(404, 'unknown_approval', 'No such approval.');
    throw err;
  };

  router.get('/isphere/approvals', needs('viewer'), async (req, res) => {
    const q = parseBody(listQuery, req.query);
    const status = q.status === 'all' ? '' : ` AND DipperStatus = '${q.status}'`;
    const filter = `${typeIs(isphereApprovalWorkflow)} AND ExecutionStatus = 'Running'${status}${q.run ? ` AND DipperRunId = '${q.run}'` : ''}`;
    const ids: string[] = [];
    await team.bounded('list approvals', async () => {
      for await (const wf of team.temporal.list(filter, q.page_size)) {
        ids.push(wf.workflowId);
        if (ids.length >= q.page_size) break;
      }
    });
    // As the question list does: one record no worker serves is left out rather than holding the whole answer.
    const views = await Promise.all(ids.map((id) => underDeadline(Date.now() + LIST_READ_MS, () => team.query(team.handle(id), approvalQuery)).catch(() => null)));
    const shown = views.filter((v): v is ApprovalView => v !== null && (q.status === 'all' || v.status === q.status));
    res.json({ approvals: await content.resolve(shown.sort((a, b) => a.requested_at - b.requested_at)) });
  });

  router.get('/runs/:runId/isphere/approvals/:id', needs('viewer'), async (req, res) => {
    res.json(await content.resolve(await team.query(handleOf(String(req.params.runId), String(req.params.id)), approvalQuery).catch(missing)));
  });

  const decide = (decision: 'approve' | 'reject'): RequestHandler => async (req, res) => {
    const [runId, id] = [String(req.params.runId), String(req.params.id)];
    const handle = handleOf(runId, id);
    const body: { reason?: string } = decision === 'approve' ? parseBody(approveBody, req.body ?? {}) : parseBody(rejectBody, req.body ?? {});
    const who = res.locals.operator as OperatorIdentity;
    try {
      res.json(await decideApproval(team, decisions, runId, id, { approver: who.name, via: 'api', decision, ...(body.reason ? { reason: body.reason } : {}) }));
    } catch (err) {
      if (!(err instanceof NotFound)) throw asHttpError(err, 409);
      // Closed (expired, decided and done, or ended with its run): nothing is left to decide, and the record says how it ended.
      const ended = (await team.bounded('approval result', () => handle.result()).catch(() => undefined)) as ApprovalView | undefined;
      if (!ended) missing(err);
      throw new HttpError(409, 'already_decided', `Approval ${ended!.approval_id} is over (${ended!.status}); it can no longer be decided.`, { status: ended!.status });
    }
  };
  router.post('/runs/:runId/isphere/approvals/:id/approve', needs('approver'), decide('approve'));
  router.post('/runs/:runId/isphere/approvals/:id/reject', needs('approver'), decide('reject'));

  /**
   * The same routes by approval id alone, as an agent's dry run and every notice name it: the run is found from the
   * approval's own request event, or else among the approvals still open.
   */
  const runOf = async (id: string): Promise<string> => {
    if (!APPROVAL_ID.test(id)) throw new HttpError(404, 'unknown_approval', 'No such approval.');
    const recorded = await events.runOfApproval(id);
    if (recorded) return recorded;
    const suffix = `/approval/${id}`;
    let found: string | null = null;
    await team.bounded('find approval', async () => {
      for await (const wf of team.temporal.list(`${typeIs(isphereApprovalWorkflow)} AND ExecutionStatus = 'Running'`, 1000)) {
        if (wf.workflowId.endsWith(suffix)) found = wf.workflowId.split('/')[1];
        if (found) break;
      }
    });
    if (!found) throw new HttpError(404, 'unknown_approval', 'No such approval.');
    return found;
  };
  const byId =
    (then: RequestHandler): RequestHandler =>
    async (req, res, next) => {
      req.params.runId = await runOf(String(req.params.id));
      return then(req, res, next);
    };
  router.get('/isphere/approvals/:id', needs('viewer'), byId(async (req, res) => {
    res.json(await content.resolve(await team.query(handleOf(String(req.params.runId), String(req.params.id)), approvalQuery).catch(missing)));
  }));
  router.post('/isphere/approvals/:id/approve', needs('approver'), byId(decide('approve')));
  router.post('/isphere/approvals/:id/reject', needs('approver'), byId(decide('reject')));
}

const auditQuery = z.strictObject({
  before: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * The iSphere audit chain on the operator API (viewer): its records, newest
 * first, and a check of the whole chain against its anchors, as
 * `dipper audit verify` does.
 */
export function auditRoutes(router: Router, audit: { store: AuditStore; key: string; witness?: string }, events: EventStore, needs: (role: 'viewer' | 'approver' | 'admin') => RequestHandler): void {
  router.get('/isphere/audit', needs('viewer'), async (req, res) => {
    const q = parseBody(auditQuery, req.query);
    const before = q.before ?? Number.MAX_SAFE_INTEGER;
    const rows = await audit.store.rowsBefore(before, q.limit);
    res.json({
      records: rows.map((r) => ({ seq: r.seq, hash: r.hash, ...(JSON.parse(r.body) as AuditEntry) })),
      next_before: rows.length === q.limit ? rows.at(-1)!.seq : null,
    });
  });

  router.get('/isphere/audit/verify', needs('viewer'), async (_req, res) => {
    const rows = async () => {
      const all: AuditRow[] = [];
      for (let after = 0; ; ) {
        const page = await audit.store.rows(after, 10_000);
        all.push(...page);
        if (page.length < 10_000) return all;
        after = page.at(-1)!.seq;
      }
    };
    const anchors = async () => {
      const all: Anchor[] = [];
      for (let after = 0; ; ) {
        const page = await events.ofType(ANCHOR_EVENT, after, 1000);
        all.push(...page.map((e) => ({ seq: Number(e.data.seq), hash: String(e.data.hash) })));
        if (page.length < 1000) return all;
        after = page.at(-1)!.seq;
      }
    };
    // The witness as this host sees it: a gateway on a host without the file says so rather than guess.
    const hasWitness = audit.witness !== undefined && fs.existsSync(audit.witness);
    const report = await verifyAudit({ key: audit.key, rows, anchors, witness: hasWitness ? new FileWitness(audit.witness!, audit.key) : undefined });
    res.json({ ...report, witness: !audit.witness ? null : hasWitness ? report.witness : 'not on this host' });
  });
}
