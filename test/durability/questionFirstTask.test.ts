import { randomBytes } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { echoWorkflow } from '../../workflows/bench/echoWorkflow';
import { answerQuestionUpdate, type QuestionInput } from '../../workflows/question/messages';
import { questionWorkflow } from '../../workflows/question/workflow';
import { agentWorkflowId, questionWorkflowId, runWorkflowId } from '../../workflows/ids';
import { replayOptions } from '../../src/ops/replayAll';
import { TemporalAdmin } from '../../src/temporal';
import { startPromotion } from '../../src/versioning/promote';
import { readTestEnv } from '../setup/env';
import { temporalForFile, updateAdmitted } from '../support/temporal';

/**
 * ask_user tells a new question's first holder itself, right after the
 * question's start, so the holder may answer before the question's first
 * workflow task has run (a loaded worker). The answer's Update then arrives
 * in that first task, beside the start: it must find the question already
 * in the holder's hands (not refuse it not_holder), and the history must
 * replay. Made here for certain: the question starts on a task queue no
 * worker polls, the answer is admitted, and only then does a worker come.
 */
const env = readTestEnv();
const temporal = temporalForFile();
const hex = () => randomBytes(6).toString('hex');

it("a holder's answer that comes with the question's first workflow task is taken, and the history replays", async () => {
  const queue = `dipper-question-first-task-${hex()}`;
  const runId = `run_${hex()}`;
  const [asker, holder] = [`ag_${hex()}`, `ag_${hex()}`];
  const client = temporal.client;
  // The run and both agents as the question sees them: workflows it can signal.
  const others = await Promise.all([runWorkflowId(runId), agentWorkflowId(runId, asker), agentWorkflowId(runId, holder)].map((workflowId) => client.workflow.start(echoWorkflow, { workflowId, taskQueue: queue, args: [] })));
  const input: QuestionInput = {
    runId,
    qid: `q_${hex()}`,
    askerId: asker,
    askerRole: 'writer',
    ancestors: [holder],
    questions: [{ question: 'Ship it?', header: '', multiSelect: false, options: [] }],
    context: null,
    humanGateway: true,
    reattachMs: 1000,
    decisionKeys: [],
  };
  const question = await client.workflow.start(questionWorkflow, { workflowId: questionWorkflowId(runId, input.qid), taskQueue: queue, args: [input] });
  try {
    const answered = question.executeUpdate(answerQuestionUpdate, { args: [{ by: { agent_id: holder }, answers: [{ selected_labels: [], text: 'Yes.' }], reason: 'Mine to answer.' }], updateId: 'answer' });
    answered.catch(() => undefined);
    await updateAdmitted(client, question.workflowId, 'answer');

    // Dipper's workflows say how they move between versions, so they run on a versioned worker only: one of its own,
    // made its deployment's current version, which takes the question (started unversioned) on.
    const version = { deploymentName: queue, buildId: 'question-first-task' };
    const connection = await NativeConnection.connect({ address: env.temporalAddress });
    const admin = await TemporalAdmin.connect(env.temporalAddress);
    try {
      const worker = await Worker.create({
        workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' },
        connection,
        namespace: env.namespace,
        taskQueue: queue,
        workflowBundle: { codePath: env.bundlePath },
        activities: { recordEvents: async () => undefined, keepTexts: async () => [] },
        // Built from history every task, as after a restart.
        maxCachedWorkflows: 0,
      });
      const outcome = await worker.runUntil(async () => {
        const promotion = startPromotion({ admin, namespace: env.namespace, version, mode: 'always', maxPauseMs: 500 });
        try {
          return await answered;
        } finally {
          promotion.stop();
        }
      });
      expect(outcome).toMatchObject({ ok: true, qid: input.qid, over: { status: 'answered', answer_text: 'Yes.' } });
    } finally {
      await Promise.all([connection.close(), admin.close()]);
    }
    const history = await question.fetchHistory();
    // The answer was taken in the question's first workflow task.
    const completed = history.events!.findIndex((e) => e.workflowTaskCompletedEventAttributes);
    const accepted = history.events!.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(history.events!.slice(0, completed).filter((e) => e.workflowTaskStartedEventAttributes)).toHaveLength(1);
    expect(accepted).toBeGreaterThan(completed);
    expect(history.events!.slice(completed + 1, accepted).some((e) => e.workflowTaskStartedEventAttributes)).toBe(false);
    await Worker.runReplayHistory(replayOptions({ codePath: env.bundlePath }, 'question-first-task'), history);
  } finally {
    await Promise.all([question, ...others].map((h) => h.terminate('test over').catch(() => undefined)));
  }
});
