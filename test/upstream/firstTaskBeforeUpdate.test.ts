import { temporal } from '@temporalio/proto';
import { eventually } from '../support/clients';
import { FIRST_TASK_MARK } from '../../workflows/interceptors';
import { connectUpstream, guardedProbeBundle, kinds, probeId, withProbeWorker, replayFailure, upstreamChanged, type History, type Upstream } from './harness';
import { addNoteUpdate, firstTaskProbe } from './probe/firstTask';

/**
 * Upstream behaviour: the heuristic of emptyTaskBeforeUpdate.test.ts, met
 * at a run's very first workflow task. A run that starts with nothing to do
 * (an agent continued as new with nothing carried) completes its first task
 * with no commands; an Update's task scheduled right after it is, for a
 * worker building the run from history (a restart: the crash soak's worker
 * kill with an Update on the dead worker's sticky queue), one activation
 * with the workflow's start. The workflow function and the handlers then run
 * in an order replay never takes (replay starts the workflow alone first),
 * and from the next task on the run can never be replayed: the crash soak's
 * `Timer machine does not handle this event: … WorkflowExecutionUpdateCompleted`.
 *
 * Workaround it justifies: FIRST_TASK_MARK in workflows/interceptors.ts, a
 * command (the patch marker) in every run's first task. The worker here
 * keeps no cache, so every task is built from history, as after a restart.
 * The last test runs the probe with Dipper's own interceptors bundled in, as
 * the worker bundles them: it fails if FirstTaskCommand stops marking.
 */
let up: Upstream;
beforeAll(async () => {
  up = await connectUpstream();
});
afterAll(() => up?.close());

/**
 * The probe's first task on one worker, which then goes (a kill); two
 * Updates while no worker runs, so both come in one task; then a fresh
 * worker. Returns the history once the window's timer fired and its task ended.
 */
async function scenario(mark: boolean, bundlePath?: string): Promise<History> {
  const id = probeId(`first-task-${mark ? 'marked' : bundlePath ? 'dipper' : 'empty'}`);
  const options = { maxCachedWorkflows: 0, activities: { write: () => Promise.resolve() }, ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : {}) };
  const handle = await up.client.workflow.start(firstTaskProbe, { taskQueue: id, workflowId: id, args: [mark] });
  try {
    await withProbeWorker(up, id, options, () => eventually(async () => (kinds(await handle.fetchHistory()).includes('workflowTaskCompleted') ? true : undefined)));
    const updates = ['one', 'two'].map((updateId) => handle.executeUpdate(addNoteUpdate, { updateId }));
    await Promise.all(['one', 'two'].map((updateId) => eventually(() => admitted(id, updateId))));
    return await withProbeWorker(up, id, options, async () => {
      await Promise.all(updates);
      // The task after the timer either schedules the write or fails.
      await eventually(async () => (kinds(await handle.fetchHistory()).some((k) => k === 'activityTaskScheduled' || k === 'workflowTaskFailed') ? true : undefined));
      return handle.fetchHistory();
    });
  } finally {
    await handle.terminate('test/upstream: done').catch(() => undefined);
  }
}

/** Whether the server holds the Update (admitted, waiting for a worker). */
async function admitted(workflowId: string, updateId: string): Promise<true | undefined> {
  const res = await up.client.workflowService
    .pollWorkflowExecutionUpdate({
      namespace: up.namespace,
      updateRef: { workflowExecution: { workflowId }, updateId },
      waitPolicy: { lifecycleStage: temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED },
    })
    .catch(() => undefined);
  return res ? true : undefined;
}

it("a run's empty first task and an Update's task built from history as one activation: the next task cannot replay it", async () => {
  const history = await scenario(false);
  const k = kinds(history);
  // The shape: the first task issued no command, and the Update's task was scheduled right after it.
  expect(k.slice(0, 6)).toEqual(['workflowExecutionStarted', 'workflowTaskScheduled', 'workflowTaskStarted', 'workflowTaskCompleted', 'workflowTaskScheduled', 'workflowTaskStarted']);
  expect(k.slice(7, 9)).toEqual(['workflowExecutionUpdateAccepted', 'workflowExecutionUpdateAccepted']);
  const failure = await replayFailure(up, history);
  if (failure === undefined) {
    throw upstreamChanged("a run's empty first task before an Update is grouped the same live and in replay", 'FIRST_TASK_MARK in workflows/interceptors.ts');
  }
  expect(failure).toMatch(/Nondeterminism error: \w+ machine does not handle this event: HistoryEvent\(id: \d+, WorkflowExecutionUpdateCompleted\)/);
  // Live, the worker's own next task (built from history) failed the same way.
  expect(k).toContain('workflowTaskFailed');
});

it('with a command in the first task (the patch marker) the same steps replay', async () => {
  const history = await scenario(true);
  const k = kinds(history);
  expect(k[4]).toBe('markerRecorded');
  expect(k.slice(9, 11)).toEqual(['workflowExecutionUpdateAccepted', 'workflowExecutionUpdateAccepted']);
  expect(k).not.toContain('workflowTaskFailed');
  expect(k).toContain('activityTaskScheduled');
  expect(await replayFailure(up, history)).toBeUndefined();
});

it("with Dipper's own interceptors (FIRST_TASK_MARK, workflows/interceptors.ts) the probe's empty first task records the marker, and the same steps replay", async () => {
  const bundle = await guardedProbeBundle();
  const history = await scenario(false, bundle);
  const k = kinds(history);
  // Without the marker this is where it fails, as the first test does.
  expect(k).not.toContain('workflowTaskFailed');
  expect(await replayFailure(up, history, bundle)).toBeUndefined();
  expect(k[4]).toBe('markerRecorded');
  // Dipper's marker, not one of the probe's own.
  const details = Object.values(history.events?.[4]?.markerRecordedEventAttributes?.details ?? {});
  expect(details.flatMap((d) => (d.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString())).join()).toContain(FIRST_TASK_MARK);
  expect(k.slice(9, 11)).toEqual(['workflowExecutionUpdateAccepted', 'workflowExecutionUpdateAccepted']);
});
