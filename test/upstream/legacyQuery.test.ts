import type { WorkflowHandle } from '@temporalio/client';
import Long from 'long';
import { eventually } from '../support/clients';
import { connectUpstream, kinds, probeId, withProbeWorker, replayFailure, upstreamChanged, type History, type Upstream } from './harness';
import { noteUpdate, pokedQuery, pokedThenTimerProbe, pokeSignal } from './probe/legacyQuery';

/**
 * Upstream behaviour: a Query the server sends as a task of its own (a
 * "legacy query": no workflow task was pending when it came, so it went
 * straight to a worker's queue) carries the history as it is when a worker
 * takes it. If the history grew meanwhile, SDK core applies the new events
 * to answer it, and keeps the commands the workflow issues in reply for the
 * next real workflow task (sdk-core worker/workflow/managed_run.rs,
 * `_incoming_wft`: a legacy query's history update goes through
 * `new_work_from_server` like a task's). That task sends them ahead of an
 * Update it accepts; replay applies the Update first and fails.
 *
 * The server's side: a Query sent to a dead worker's sticky queue waits
 * there for the sticky timeout, then goes to the normal queue
 * (`queryDirectlyThroughMatching`, temporalio/temporal). The dead worker
 * is this test, completing the first task by hand with a sticky queue of
 * its own, taking the Query there and the poke's task after it, and never
 * answering either: the held task keeps the fresh worker from learning of
 * the poke until it times out, well after the Query reached it.
 *
 * Workarounds it justifies: the Query guards of workflows/interceptors.ts
 * (QUERY_REFUSED, QUERY_COLD) and the gateway's Query deadline below the
 * sticky timeout (src/temporal/deadlines.ts).
 */
const STICKY = 2; // TASK_QUEUE_KIND_STICKY
const WORKFLOW_TASKS = 1; // TASK_QUEUE_TYPE_WORKFLOW
const STICKY_TIMEOUT_S = 2;
const TASK_TIMEOUT = '5s';

let up: Upstream;
let handle: WorkflowHandle | undefined;
beforeAll(async () => {
  up = await connectUpstream();
});
afterAll(async () => {
  await handle?.terminate('test/upstream: done').catch(() => undefined);
  await up?.close();
});

interface Outcome {
  /** The Query's answer: whether the probe had been poked. */
  poked: boolean;
  /** Workflow tasks completed when the Query was answered. */
  completedTasksWhenAnswered: number;
  history: History;
}

async function scenario(): Promise<Outcome> {
  const id = probeId('legacy-query');
  const dead = { name: `${id}/dead-sticky`, kind: STICKY, normalName: id };
  const svc = up.client.workflowService;
  const poll = (taskQueue: object) =>
    up.connection.withDeadline(Date.now() + 30_000, () => svc.pollWorkflowTaskQueue({ namespace: up.namespace, taskQueue, identity: 'dead worker' }));
  handle = await up.client.workflow.start(pokedThenTimerProbe, { taskQueue: id, workflowId: id, workflowTaskTimeout: TASK_TIMEOUT });
  const first = await poll({ name: id });
  await svc.respondWorkflowTaskCompleted({
    namespace: up.namespace,
    taskToken: first.taskToken,
    identity: 'dead worker',
    commands: [],
    stickyAttributes: { workerTaskQueue: dead, scheduleToStartTimeout: { seconds: Long.fromNumber(STICKY_TIMEOUT_S) } },
  });
  const h = handle;
  return withProbeWorker(up, id, {}, async () => {
    // The server sends a Query to a sticky queue only while a worker polls it.
    const onDead = poll(dead);
    await eventually(async () => {
      const queue = await svc.describeTaskQueue({ namespace: up.namespace, taskQueue: dead, taskQueueType: WORKFLOW_TASKS });
      return (queue.pollers?.length ?? 0) > 0 ? true : undefined;
    });
    const answer = h.query(pokedQuery).then(
      async (poked) => ({ poked, history: await h.fetchHistory() }),
      (err: unknown) => {
        throw upstreamChanged(`a legacy Query task that brings new history is no longer answered (${String(err)})`, 'The Query guards of workflows/interceptors.ts');
      },
    );
    expect((await onDead).query?.queryType).toBe('poked');
    await h.signal(pokeSignal);
    const held = await poll(dead);
    expect(Number(held.startedEventId)).toBeGreaterThan(0);
    const { poked, history: whenAnswered } = await answer;
    await h.executeUpdate(noteUpdate);
    return {
      poked,
      completedTasksWhenAnswered: kinds(whenAnswered).filter((k) => k === 'workflowTaskCompleted').length,
      history: await h.fetchHistory(),
    };
  });
}

it('a Query task applies events no workflow task has, and its commands go out ahead of the next task\'s Update; replay fails', async () => {
  const { poked, completedTasksWhenAnswered, history } = await scenario();
  // Only the first task (by hand, no commands) had completed when the fresh worker answered the Query.
  expect(completedTasksWhenAnswered).toBe(1);
  if (!poked) throw upstreamChanged('a legacy Query task no longer applies history beyond the last completed workflow task', 'The Query guards of workflows/interceptors.ts');
  // The next task sent the timer the Query's activation started, then accepted the Update.
  const k = kinds(history);
  const timerAt = k.indexOf('timerStarted');
  expect(k.slice(timerAt - 1, timerAt + 3)).toEqual(['workflowTaskCompleted', 'timerStarted', 'workflowExecutionUpdateAccepted', 'workflowExecutionUpdateCompleted']);

  const failure = await replayFailure(up, history);
  if (failure === undefined) {
    throw upstreamChanged('commands from a legacy Query task no longer go out ahead of an Update', 'The Query guards of workflows/interceptors.ts');
  }
  expect(failure).toMatch(/Nondeterminism error: Update machine does not handle this event: HistoryEvent\(id: \d+, TimerStarted\)/);
});
