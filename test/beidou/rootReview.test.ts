import fs from 'node:fs';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { DecisionKeys } from '../../src/auth/decisionKeys';
import { questionClaim, rootDecisionClaim } from '../../src/common/pure/decisionProof';
import { questionWorkflowId, runWorkflowId } from '../../workflows/ids';
import { answerQuestionUpdate, declineQuestionUpdate } from '../../workflows/question/messages';
import { rootAnsweredSignal, rootDecisionUpdate } from '../../workflows/run/messages';
import { readTestEnv, testDataRoot } from '../setup/env';
import { eventually } from '../support/clients';
import { temporalForFile } from '../support/temporal';
import { closeAll, eventsOf, operator, startRun, waitForInbox } from '../support/team';

const temporal = temporalForFile(closeAll);

/** The run's questions waiting for a person, once there are `count`. */
async function waitingQuestions(runId: string, count = 1): Promise<any[]> {
  return eventually(async () => {
    const res = await operator.request('GET', `/questions?run=${runId}`);
    return res.json.questions.length >= count ? res.json.questions : undefined;
  });
}

const answer = (runId: string, qid: string, labels: string[], text: string | null = null) =>
  operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [{ selected_labels: labels, text }] });

async function rootStatus(root: any, rootId: string): Promise<string> {
  const peers = await root.ok('list_peers', { scope: 'all' });
  return peers.peers.find((p: any) => p.agent_id === rootId).status;
}

describe("the root's review, asked of the person", () => {
  it('is an Approve / Rework question; Approve acknowledges and the root carries on', async () => {
    const { runId, rootId, root } = await startRun();
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] the release notes are written' });
    const [q] = await waitingQuestions(runId);
    expect(q).toMatchObject({
      system: { kind: 'root_review', agent_id: rootId },
      holder: 'user',
      chain: ['user'],
      context: '[REVIEW REQUIRED] the release notes are written',
    });
    expect(q.questions[0]).toMatchObject({ header: 'Verdict', multiSelect: false, no_other: true });
    expect(q.questions[0].options.map((o: any) => [o.label, o.requires_text === true])).toEqual([
      ['Approve', false],
      ['Rework', true],
    ]);
    expect((await operator.request('GET', `/runs/${runId}`)).json.pending_root).toEqual([expect.objectContaining({ kind: 'review', qid: q.qid })]);

    // No typed "Other" verdict, and no declining: the root waits on Approve or Rework.
    const other = await answer(runId, q.qid, [], 'Looks fine I guess');
    expect(other.json.error).toMatchObject({ code: 'invalid_input', field: 'answers[0].selected_labels' });
    const declined = await operator.request('POST', `/runs/${runId}/questions/${q.qid}/decline`, { reason: 'not mine' });
    expect(declined.json.error.code).toBe('invalid_input');

    expect((await answer(runId, q.qid, ['Approve'])).json).toEqual({ ok: true, qid: q.qid });
    const [approved] = await eventsOf(runId, 'completion.approved');
    expect(approved.data).toMatchObject({ kind: 'review', by: 'user', operator: 'operator' });
    await eventually(async () => ((await rootStatus(root, rootId)) === 'active' ? true : undefined));
    expect((await operator.request('GET', `/runs/${runId}`)).json).toMatchObject({ status: 'active', pending_root: [] });
    const after = await operator.request('GET', `/runs/${runId}/questions/${q.qid}`);
    expect(after.json).toMatchObject({ status: 'answered', answered_by: { operator: 'operator' } });
  });

  it('Rework needs words, which reach the root as "rework: ..."', async () => {
    const { runId, rootId, root } = await startRun();
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] draft one' });
    const [q] = await waitingQuestions(runId);
    const bare = await answer(runId, q.qid, ['Rework']);
    expect(bare.json.error).toMatchObject({ code: 'invalid_input', field: 'answers[0].text' });
    expect((await answer(runId, q.qid, ['Rework'], 'Tighten the tests.')).status).toBe(200);
    await waitForInbox(root, (m) => m.content === 'rework: Tighten the tests.');
    const [rework] = await eventsOf(runId, 'completion.rework');
    expect(rework.data).toMatchObject({ kind: 'review', by: 'user' });
    await eventually(async () => ((await rootStatus(root, rootId)) === 'active' ? true : undefined));
  });

  it("a root termination approved by the person ends the run", async () => {
    const { runId, rootId, root } = await startRun();
    await root.ok('request_termination', { detail: 'All tasks are done.' });
    const [q] = await waitingQuestions(runId);
    expect(q).toMatchObject({ system: { kind: 'root_termination', agent_id: rootId }, context: 'All tasks are done.' });
    expect((await answer(runId, q.qid, ['Approve'])).status).toBe(200);
    await eventsOf(runId, 'run_completed');
    expect((await operator.request('GET', `/runs/${runId}`)).json.status).toBe('completed');
  });

  it('decided through /root/decision, or reported again, the older question is withdrawn', async () => {
    const { runId, root } = await startRun();
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] first' });
    const [first] = await waitingQuestions(runId);
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] second' });
    // The newer report replaces the question about the older one.
    const second = await eventually(async () => {
      const qs = (await operator.request('GET', `/questions?run=${runId}`)).json.questions;
      return qs.length === 1 && qs[0].qid !== first.qid ? qs[0] : undefined;
    });
    expect(second.context).toBe('[REVIEW REQUIRED] second');
    expect((await operator.request('GET', `/runs/${runId}/questions/${first.qid}`)).json.status).toBe('cancelled');

    const decided = await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'review', verdict: 'approve' });
    expect(decided.status).toBe(200);
    await eventually(async () => ((await operator.request('GET', `/runs/${runId}/questions/${second.qid}`)).json.status === 'cancelled' ? true : undefined));
    // A late answer to the withdrawn question changes nothing.
    expect((await answer(runId, second.qid, ['Rework'], 'late')).json.error.code).toBe('unknown_qid');
    expect(await eventsOf(runId, 'completion.approved')).toHaveLength(1);
    const [withdrawn] = await eventsOf(runId, 'question_withdrawn', 2);
    expect(withdrawn.data.qid).toBe(first.qid);
  });
});

describe('a verdict sent round the gateway', () => {
  const refusalOf = (err: unknown) => (err instanceof WorkflowUpdateFailedError ? (err.cause as { type?: string } | undefined)?.type : String(err));
  const outsider = new DecisionKeys(['not-the-gateway-secret']);
  const approve = [{ selected_labels: ['Approve'], text: null }];

  it('straight to Temporal, bare or signed with another key, decides nothing; the person\'s own answer then does', async () => {
    const { runId, root } = await startRun();
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] forge me' });
    const [q] = await waitingQuestions(runId);
    const question = temporal.client.workflow.getHandle(questionWorkflowId(runId, q.qid));
    const run = temporal.client.workflow.getHandle(runWorkflowId(runId));
    const signed = (at: number) => outsider.prove(questionClaim(runId, q, 'operator', { answers: approve }, at));

    // The question's answer and refusal, as if from the human gateway.
    for (const proof of [undefined, signed(Date.now())]) {
      const answered = await question.executeUpdate(answerQuestionUpdate, { args: [{ by: { operator: 'operator' }, answers: approve, reason: null, ...(proof ? { proof } : {}) }] }).then(() => 'taken', refusalOf);
      expect(answered).toBe('unproven_decision');
    }
    const declined = await question.executeUpdate(declineQuestionUpdate, { args: [{ operator: 'operator', reason: 'no' }] }).then(() => 'taken', refusalOf);
    // A root review cannot be declined at all; that refusal comes first.
    expect(declined).toBe('invalid_input');
    // The operator API's verdict.
    const report = (await operator.request('GET', `/runs/${runId}`)).json.pending_root[0];
    for (const proof of [undefined, outsider.prove(rootDecisionClaim(runId, report, { verdict: 'approve', operator: 'operator' }, Date.now()))]) {
      const decided = await run.executeUpdate(rootDecisionUpdate, { args: [{ kind: 'review', verdict: 'approve', operator: 'operator', ...(proof ? { proof } : {}) }] }).then(() => 'taken', refusalOf);
      expect(decided).toBe('unproven_decision');
    }
    // Signed by the gateway but for the report before this one (the person looked, the root reported again): stale, not taken.
    const gateway = new DecisionKeys([readTestEnv().tokenSecret]);
    const older = { ...report, ts: report.ts - 1 };
    const stale = await run
      .executeUpdate(rootDecisionUpdate, { args: [{ kind: 'review', verdict: 'approve', operator: 'operator', proof: gateway.prove(rootDecisionClaim(runId, older, { verdict: 'approve', operator: 'operator' }, Date.now())), report_ts: older.ts }] })
      .then(() => 'taken', refusalOf);
    expect(stale).toBe('stale');
    // The question's word to the run, which a Signal carries and no validator guards: the run checks the proof itself.
    const before = (await run.fetchHistory()).events?.length ?? 0;
    await run.signal(rootAnsweredSignal, { qid: q.qid, kind: 'review', operator: 'operator', given: approve, asked_at: q.asked_at, proof: signed(Date.now()) });
    // The positive sign: a workflow task completed after the Signal, so the run has handled it.
    await eventually(async () => {
      const events = ((await run.fetchHistory()).events ?? []).slice(before);
      const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'rootAnswered');
      return signalled >= 0 && events.slice(signalled).some((e) => e.workflowTaskCompletedEventAttributes) ? true : undefined;
    });
    expect((await operator.request('GET', `/runs/${runId}`)).json.pending_root).toEqual([expect.objectContaining({ kind: 'review', qid: q.qid })]);
    expect((await operator.request('GET', `/runs/${runId}/questions/${q.qid}`)).json.status).toBe('pending');
    expect(await eventsOf(runId, 'completion.approved', 0)).toEqual([]);
    await eventually(async () => {
      const log = fs.readFileSync(path.join(testDataRoot, 'worker.log'), 'utf8').split('\n');
      const refused = log.filter((l) => l.includes('refused a decision without a valid proof') && l.includes(q.qid));
      // The question's validator said it for the Updates, the run for the Signal.
      return refused.some((l) => l.includes('question_answer')) && refused.some((l) => l.includes('root_answer')) ? true : undefined;
    }, 10_000);

    // The person, through the gateway: taken.
    expect((await answer(runId, q.qid, ['Approve'])).json).toEqual({ ok: true, qid: q.qid });
    const [approved] = await eventsOf(runId, 'completion.approved');
    expect(approved.data).toMatchObject({ kind: 'review', by: 'user', operator: 'operator' });
  });
});
