import { eventually } from '../support/clients';
import { connectUpstream, kinds, probeId, withProbeWorker, replayFailure, upstreamChanged, type History, type Upstream } from './harness';
import { flushLoopProbe, noteUpdate, nudgeSignal } from './probe/emptyTask';
import { dipperFlushProbe, idleSignal, recordUpdate } from './probe/dipperFlush';

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
 * from history, as on a worker that has just restarted. The last test runs
 * Dipper's own EventBuffer through the same steps: it fails if markWritten()
 * is taken out of it (checked by hand: with the upsert commented out, its
 * history fails replay with the soak's signature).
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

it("Dipper's own event writer (EventBuffer, workflows/events.ts) through the same steps: its closing upsert keeps replay's grouping", async () => {
  const id = probeId('empty-task-dipper');
  let release!: () => void;
  const firstWrite = new Promise<void>((resolve) => (release = resolve));
  let writes = 0;
  const options = { maxCachedWorkflows: 0, activities: { recordEvents: () => (writes++ === 0 ? firstWrite : Promise.resolve()) } };
  const handle = await up.client.workflow.start(dipperFlushProbe, { taskQueue: id, workflowId: id });
  const history = async () => kinds(await handle.fetchHistory());
  const completedTasks = async () => (await history()).filter((k) => k === 'workflowTaskCompleted').length;
  let k: string[];
  let replayed: string | undefined;
  try {
    const final = await withProbeWorker(up, id, options, async () => {
      try {
        // The window's timer, then the first write, held (its ActivityTaskStarted is only written when it ends).
        await eventually(async () => ((await history()).includes('activityTaskScheduled') ? true : undefined));
        const before = await completedTasks();
        await handle.signal(idleSignal);
        await eventually(async () => ((await completedTasks()) === before + 1 ? true : undefined));
        release();
        await eventually(async () => ((await completedTasks()) === before + 2 ? true : undefined));
        await handle.executeUpdate(recordUpdate);
        return await handle.fetchHistory();
      } finally {
        // A write still held would keep the worker from shutting down.
        release();
      }
    });
    k = kinds(final);
    replayed = await replayFailure(up, final);
  } finally {
    await handle.terminate('test/upstream: done').catch(() => undefined);
  }
  // Without markWritten() this is where it fails: `Timer machine does not handle this event: … ActivityTaskScheduled` (the window's timer).
  expect(replayed).toBeUndefined();
  const learned = k.indexOf('workflowTaskCompleted', k.indexOf('activityTaskCompleted'));
  // markWritten()'s upsert is the command of the task that learned of the write.
  expect(k[learned + 1]).toBe('workflowPropertiesModified');
  // Replay's grouping live too: the write's completion on its own, then the Update, whose event waits for the window.
  const acceptedAt = k.indexOf('workflowExecutionUpdateAccepted');
  expect(k.slice(acceptedAt, acceptedAt + 3)).toEqual(['workflowExecutionUpdateAccepted', 'workflowExecutionUpdateCompleted', 'timerStarted']);
});
