import { eventually } from '../support/clients';
import { connectUpstream, kinds, probeId, withProbeWorker, replayFailure, upstreamChanged, type History, type Upstream } from './harness';
import { flushLoopProbe, noteUpdate, nudgeSignal } from './probe/emptyTask';

/**
 * Upstream behaviour: SDK core splits a history into workflow tasks with a
 * heuristic (`find_end_index_of_next_wft_seq`, sdk-core
 * worker/workflow/history_update.rs). A task that completed with no
 * commands, when the sequence it ends saw no command either and the next
 * event schedules another task, counts as a "heartbeat" and does not end
 * its sequence, unless an UpdateAccepted event after the next task says
 * where an Update was sequenced. A worker that builds the run from history
 * for an Update's task sees no UpdateAccepted yet, and applies the events
 * before it (here an activity's completion) in the Update's activation;
 * replay sees the acceptance and applies them apart. The two disagree on
 * the commands, and the workflow can never be replayed again.
 *
 * Workaround it justifies: markWritten() in workflows/events.ts, a memo
 * upsert closing every event write, so the task that learns of the write
 * is never empty. The worker here keeps no cache, so every task is built
 * from history, as on a worker that has just restarted.
 */
let up: Upstream;
beforeAll(async () => {
  up = await connectUpstream();
});
afterAll(() => up?.close());

/**
 * Drives the probe through the shape: a task with no commands (a nudge
 * while a write runs), the write's completion in a task that issues none
 * either (or only the closing memo upsert), then an Update whose task
 * follows at once. Returns the history once the Update has completed.
 */
async function scenario(closeWithCommand: boolean): Promise<History> {
  const id = probeId(`empty-task-${closeWithCommand ? 'closed' : 'open'}`);
  let release!: () => void;
  const firstWrite = new Promise<void>((resolve) => (release = resolve));
  let writes = 0;
  const options = { maxCachedWorkflows: 0, activities: { write: () => (writes++ === 0 ? firstWrite : Promise.resolve()) } };
  const handle = await up.client.workflow.start(flushLoopProbe, { taskQueue: id, workflowId: id, args: [closeWithCommand] });
  const completedTasks = async () => kinds(await handle.fetchHistory()).filter((k) => k === 'workflowTaskCompleted').length;
  try {
    return await withProbeWorker(up, id, options, async () => {
      await eventually(async () => ((await completedTasks()) === 1 ? true : undefined));
      await handle.signal(nudgeSignal);
      await eventually(async () => ((await completedTasks()) === 2 ? true : undefined));
      release();
      await eventually(async () => ((await completedTasks()) === 3 ? true : undefined));
      await handle.executeUpdate(noteUpdate);
      return handle.fetchHistory();
    });
  } finally {
    await handle.terminate('test/upstream: done').catch(() => undefined);
  }
}

it('a worker building the run from history applies a write\'s completion with the next Update; replay applies it apart, and fails', async () => {
  const history = await scenario(false);
  // The shape: the task that learned of the write issued no command, and the Update's task was scheduled right after.
  const k = kinds(history);
  const written = k.indexOf('activityTaskCompleted');
  const learned = k.indexOf('workflowTaskCompleted', written);
  expect(k.slice(learned, learned + 3)).toEqual(['workflowTaskCompleted', 'workflowTaskScheduled', 'workflowTaskStarted']);
  // The live worker resumed the loop in the Update's activation: it wrote at once instead of starting the window's timer.
  const acceptedAt = k.indexOf('workflowExecutionUpdateAccepted');
  expect(k.slice(acceptedAt, acceptedAt + 3)).toEqual(['workflowExecutionUpdateAccepted', 'activityTaskScheduled', 'workflowExecutionUpdateCompleted']);

  const failure = await replayFailure(up, history);
  if (failure === undefined) {
    throw upstreamChanged('an empty workflow task before an Update is grouped the same live and in replay', 'markWritten() in workflows/events.ts (the closing memo upsert)');
  }
  expect(failure).toMatch(/Nondeterminism error: Update machine does not handle this event: HistoryEvent\(id: \d+, ActivityTaskScheduled\)/);
});

it('with a command closing the write (the memo upsert of markWritten) the same steps replay', async () => {
  const history = await scenario(true);
  const k = kinds(history);
  const learned = k.indexOf('workflowTaskCompleted', k.indexOf('activityTaskCompleted'));
  expect(k[learned + 1]).toBe('workflowPropertiesModified');
  // Replay's grouping: the loop resumed alone, found nothing pending, and waited for its window.
  const acceptedAt = k.indexOf('workflowExecutionUpdateAccepted');
  expect(k.slice(acceptedAt, acceptedAt + 3)).toEqual(['workflowExecutionUpdateAccepted', 'workflowExecutionUpdateCompleted', 'timerStarted']);
  expect(await replayFailure(up, history)).toBeUndefined();
});
