import type { InboxWakeups } from '../registry/capabilities';
import type { RequestHandler, Router } from 'express';
import { z } from 'zod';
import { questionWorkflow } from '../../workflows';
import { isQid, questionWorkflowId } from '../../workflows/ids';
import { typeIs } from '../temporal';
import { answerQuestionUpdate, declineQuestionUpdate, questionQuery, type QuestionOver, type QuestionView } from '../../workflows/question/messages';
import { toAnswer, type GivenAnswer } from '../../workflows/question/answers';
import type { DecisionKeys } from '../auth/decisionKeys';
import type { OperatorIdentity } from '../auth/operators';
import { questionClaim } from '../common/pure/decisionProof';
import { asHttpError, HttpError, parseBody } from './http';
import { NotFound, type TeamClient } from './teamClient';
import type { ContentKeeper } from './content';
import { underDeadline } from './deadline';

const RUN_ID = /^run_[a-f0-9]{12}$/;
/** How long the question list waits for any one question's record. */
const LIST_READ_MS = 2000;

const answerBody = z.strictObject({
  answers: z
    .array(z.strictObject({ selected_labels: z.array(z.string()).max(4), text: z.string().max(64 * 1024).nullable() }))
    .min(1)
    .max(4),
});
const declineBody = z.strictObject({ reason: z.string().min(1).max(4000) });
const listQuery = z.strictObject({
  run: z.string().regex(RUN_ID).optional(),
  page_size: z.coerce.number().int().min(1).max(50).default(50),
});

/**
 * The human gateway's half of questions, on the operator API: what waits
 * for a person, each question's whole record, and the person's answer or
 * refusal (approver role; the operator's name is recorded).
 */
export function questionRoutes(
  router: Router,
  team: TeamClient,
  content: ContentKeeper,
  keys: DecisionKeys,
  wakeups: InboxWakeups,
  needs: (role: 'viewer' | 'approver' | 'admin') => RequestHandler,
): void {
  const handleOf = (runId: string, qid: string) => {
    if (!RUN_ID.test(runId) || !isQid(qid)) throw new HttpError(404, 'unknown_qid', 'No such question.');
    return team.handle(questionWorkflowId(runId, qid));
  };
  // The asker's ask_user, when it waits on this process, is handed the outcome; elsewhere it hears the question's wake.
  const tellAsker = <T extends { over?: QuestionOver }>(asked: QuestionView, call: () => Promise<T>) => wakeups.bring(asked.run_id, asked.qid, call, (done) => done.over);
  const missing = (err: unknown): never => {
    if (err instanceof NotFound) throw new HttpError(404, 'unknown_qid', 'No such question.');
    throw err;
  };

  /**
   * The question's record once a call on it was refused: a person who asks
   * again after an answer that never reached them (a 503 while a worker
   * restarted, a dropped connection) learns their first call counted.
   */
  const settled = (handle: ReturnType<typeof handleOf>): Promise<QuestionView | null> => team.query(handle, questionQuery).catch(() => null);

  // Questions waiting for a person, oldest first, with their records (visibility finds them; a Query reads each).
  router.get('/questions', needs('viewer'), async (req, res) => {
    const q = parseBody(listQuery, req.query);
    const filter = `${typeIs(questionWorkflow)} AND ExecutionStatus = 'Running' AND DipperStatus = 'awaiting_user'${q.run ? ` AND DipperRunId = '${q.run}'` : ''}`;
    const ids: string[] = [];
    await team.bounded('list questions', async () => {
      for await (const wf of team.temporal.list(filter, q.page_size)) {
        ids.push(wf.workflowId);
        if (ids.length >= q.page_size) break;
      }
    });
    // Each read gets a short deadline of its own: a question no worker serves (its host down, its queue gone) is left
    // out of this answer instead of holding the whole list, which the console reads every few seconds.
    const views = await Promise.all(
      ids.map((id) => underDeadline(Date.now() + LIST_READ_MS, () => team.query(team.handle(id), questionQuery)).catch(() => null)),
    );
    const pending = views.filter((v): v is QuestionView => v !== null && v.status === 'pending' && v.holder === 'user');
    // A root's long report is the context of its review question, kept in the content store.
    res.json({ questions: await content.resolve(pending.sort((a, b) => a.asked_at - b.asked_at)) });
  });

  router.get('/runs/:runId/questions/:qid', needs('viewer'), async (req, res) => {
    res.json(await content.resolve(await team.query(handleOf(String(req.params.runId), String(req.params.qid)), questionQuery).catch(missing)));
  });

  router.post('/runs/:runId/questions/:qid/answer', needs('approver'), async (req, res) => {
    const handle = handleOf(String(req.params.runId), String(req.params.qid));
    const body = parseBody(answerBody, req.body);
    const who = res.locals.operator as OperatorIdentity;
    // Signed for this question as asked (a closed question's id can be asked again): read it first.
    const asked = await team.query(handle, questionQuery).catch(missing);
    const proof = keys.prove(questionClaim(asked.run_id, asked, who.name, { answers: body.answers }, Date.now()));
    try {
      const { over: _over, ...answered } = await tellAsker(asked, () =>
        team.update(handle, answerQuestionUpdate, [{ by: { operator: who.name }, answers: body.answers, reason: null, proof, asked_at: asked.asked_at }]),
      );
      res.json(answered);
    } catch (err) {
      const view = await settled(handle);
      if (view && answeredSo(view, who.name, body.answers)) return void res.json({ ok: true, qid: view.qid, already: true });
      missing(asHttpError(err, 409));
    }
  });

  router.post('/runs/:runId/questions/:qid/decline', needs('approver'), async (req, res) => {
    const handle = handleOf(String(req.params.runId), String(req.params.qid));
    const body = parseBody(declineBody, req.body);
    const who = res.locals.operator as OperatorIdentity;
    const asked = await team.query(handle, questionQuery).catch(missing);
    const proof = keys.prove(questionClaim(asked.run_id, asked, who.name, { decline: body.reason }, Date.now()));
    try {
      const { over: _over, ...declined } = await tellAsker(asked, () =>
        team.update(handle, declineQuestionUpdate, [{ operator: who.name, reason: body.reason, proof, asked_at: asked.asked_at }]),
      );
      res.json(declined);
    } catch (err) {
      const view = await settled(handle);
      if (view?.status === 'declined' && view.declined?.operator === who.name && view.declined.reason === body.reason) {
        return void res.json({ ok: true, qid: view.qid, already: true });
      }
      missing(asHttpError(err, 409));
    }
  });
}

/** The question was answered by this operator with exactly these answers. */
function answeredSo(view: QuestionView, operator: string, given: GivenAnswer[]): boolean {
  if (view.status !== 'answered' || view.answered_by?.operator !== operator || view.answers?.length !== given.length) return false;
  const asGiven = given.map((a, i) => toAnswer(view.questions[i], a));
  return view.answers.every((a, i) => a.text === asGiven[i].text && sameLabels(a.selected_labels, asGiven[i].selected_labels));
}

const sameLabels = (a: string[], b: string[]) => a.length === b.length && a.every((label, i) => label === b[i]);
