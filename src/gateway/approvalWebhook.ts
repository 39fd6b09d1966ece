import type { DecisionKeys } from '../auth/decisionKeys';
import { decideApproval } from './decisions';
import express, { type Router } from 'express';
import { z } from 'zod';
import { approvalWorkflowId } from '../../workflows/ids';
import type { ApprovalView } from '../../workflows/isphere/messages';
import { mayAct, type Operators } from '../auth/operators';
import type { IsphereConfig } from '../config';
import type { Logger } from '../log';
import { SIGNATURE_HEADER, verify } from '../common/isphere/signature';
import { asHttpError, HttpError } from './http';
import { NotFound, type TeamClient } from './teamClient';

const RUN_ID = /^run_[a-f0-9]{12}$/;
const APPROVAL_ID = /^apr_[A-Za-z0-9_-]{1,64}$/;

const decisionBody = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  approver: z.string().min(1).max(64),
  reason: z.string().trim().min(1).max(4000).optional(),
  delivery_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
});

/**
 * An approval system's decision (a chat bot, a ticketing tool): signed with
 * a configured secret over the method, the path (so the run and approval it
 * decides), the raw body and its time, and naming the
 * person who decided, who must be an operator with the approver role. No
 * operator or agent token is involved, so an agent, which holds neither
 * the secret nor a way to the person, cannot approve its own request. The
 * same delivery again is answered as already done.
 */
export function approvalWebhook(config: IsphereConfig, operators: Operators, team: TeamClient, decisions: DecisionKeys, log: Logger): Router {
  const router = express.Router();
  router.post('/hooks/isphere/approvals/:runId/:id/decision', express.raw({ type: () => true, limit: '64kb' }), async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signed = verify(req.get(SIGNATURE_HEADER), { method: req.method, path: req.originalUrl, body: raw }, config.webhookSecrets);
    if (!signed.ok) {
      log.warn({ reason: signed.reason }, 'approval webhook refused');
      throw new HttpError(401, signed.reason === 'stale' ? 'stale_signature' : 'bad_signature', signed.reason === 'stale' ? 'The signature is too old or too new.' : 'The request is not signed by a configured approval system.');
    }
    let parsed: z.infer<typeof decisionBody>;
    try {
      parsed = decisionBody.parse(JSON.parse(raw.toString('utf8')));
    } catch {
      throw new HttpError(400, 'invalid_input', 'The body must be {decision, approver, reason?, delivery_id}.');
    }
    const who = operators.named(parsed.approver);
    if (!who || !mayAct(who, 'approver')) throw new HttpError(403, 'not_an_approver', `${parsed.approver} is not an operator who may approve.`);
    if (parsed.decision === 'reject' && !parsed.reason) throw new HttpError(400, 'invalid_input', 'A rejection needs a reason.', { field: 'reason' });
    const runId = String(req.params.runId);
    const id = String(req.params.id);
    if (!RUN_ID.test(runId) || !APPROVAL_ID.test(id)) throw new HttpError(404, 'unknown_approval', 'No such approval.');
    const handle = team.handle(approvalWorkflowId(runId, id));
    try {
      const done = await decideApproval(team, decisions, runId, id, { approver: who.name, via: 'webhook', decision: parsed.decision, reason: parsed.reason, delivery_id: `${signed.name}/${parsed.delivery_id}` });
      log.info({ approval: id, decision: parsed.decision, system: signed.name, already: done.already }, 'approval decided by webhook');
      res.json(done);
    } catch (err) {
      if (!(err instanceof NotFound)) throw asHttpError(err, 409);
      const ended = (await team.bounded('approval result', () => handle.result()).catch(() => undefined)) as ApprovalView | undefined;
      if (!ended) throw new HttpError(404, 'unknown_approval', 'No such approval.');
      throw new HttpError(409, 'already_decided', `Approval ${id} is over (${ended.status}).`, { status: ended.status });
    }
  });
  return router;
}
