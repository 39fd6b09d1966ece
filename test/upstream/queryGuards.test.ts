import type { WorkflowHandle } from '@temporalio/client';
import Long from 'long';
import { QUERY_COLD, QUERY_REFUSED } from '../../src/common/pure/queryGuard';
import { queryCapMs } from '../../src/temporal';
import { eventually } from '../support/clients';
import { connectUpstream, guardedProbeBundle, kinds, probeId, withProbeWorker, replayFailure, upstreamChanged, type History, type Upstream } from './harness';
import { noteUpdate, pokedQuery, pokedThenTimerProbe, pokeSignal } from './probe/legacyQuery';

/**
 * Upstream behaviour (as in legacyQuery.test.ts, in the shape the crash
 * soak met: docs/decisions.md, "A Query must not outlive a dead worker"):
 * a Query sent while no workflow task is pending goes straight to the
 * workflow's sticky queue; its worker is dead, so the server gives up there
 * after the sticky timeout and hands the Query to the normal queue. Events
 * that came meanwhile (here a signal, whose task still waits, unstarted, on
 * the dead queue, and an Update behind it) travel with the Query, and SDK
 * core applies them to answer it on a fresh worker, keeping the commands
 * the workflow issues in reply (the timer the signal starts) for the next
 * workflow task, which sends them ahead of the Update's acceptance. Replay
 * puts the Update first and fails.
 *
 * Workaround it justifies: the Query guards of workflows/interceptors.ts
 * (QueryCannotAdvance). The same steps run twice: on the probes alone, and
 * on the probes bundled with Dipper's interceptors as the worker bundles
 * them. The second run fails if the guards are taken out (its Query is then
 * answered and its history breaks as the first one's does). On a fresh
 * worker the instance is cold, so the guard that refuses here is QUERY_COLD.
 *
 * And the gateway's half: its Queries carry a deadline below the sticky
 * timeout (queryCapMs, src/temporal/deadlines.ts). The server hands a Query
 * on to the normal queue only while its caller still waits, so a capped
 * Query never reaches the fresh worker: the last test runs the probes
 * alone with that deadline, and fails if the cap reaches the sticky timeout.
 */
const STICKY = 2; // TASK_QUEUE_KIND_STICKY
const WORKFLOW_TASKS = 1; // TASK_QUEUE_TYPE_WORKFLOW
const STICKY_TIMEOUT_S = 2;

let up: Upstream;
const handles: WorkflowHandle[] = [];
beforeAll(async () => {
  up = await connectUpstream();
});
afterAll(async () => {
  await Promise.all(handles.map((h) => h.terminate('test/upstream: done').catch(() => undefined)));
  await up?.close();
});

interface Outcome {
  /** The Query's answer (whether the probe had been poked), or its failure's message. */
  answer: boolean | string;
  history: History;
}

async function scenario(name: string, bundlePath: string, queryDeadlineMs?: number): Promise<Outcome> {
  const id = probeId(`query-guards-${name}`);
  const dead = { name: `${id}/dead-sticky`, kind: STICKY, normalName: id };
  const svc = up.client.workflowService;
  const poll = (taskQueue: object) =>
    up.connection.withDeadline(Date.now() + 30_000, () => svc.pollWorkflowTaskQueue({ namespace: up.namespace, taskQueue, identity: 'dead worker' }));
  const h = await up.client.workflow.start(pokedThenTimerProbe, { taskQueue: id, workflowId: id, workflowTaskTimeout: '5s' });
  handles.push(h);
  // The dead worker ran the first task and asked for its next ones on a sticky queue of its own.
  const first = await poll({ name: id });
  await svc.respondWorkflowTaskCompleted({
    namespace: up.namespace,
    taskToken: first.taskToken,
    identity: 'dead worker',
    commands: [],
    stickyAttributes: { workerTaskQueue: dead, scheduleToStartTimeout: { seconds: Long.fromNumber(STICKY_TIMEOUT_S) } },
  });
  return withProbeWorker(up, id, { workflowBundle: { codePath: bundlePath } }, async () => {
    // The server sends a Query to a sticky queue only while a worker polls it; this poll takes the Query and never answers.
    const onDead = poll(dead);
    await eventually(async () => {
      const queue = await svc.describeTaskQueue({ namespace: up.namespace, taskQueue: dead, taskQueueType: WORKFLOW_TASKS });
      return (queue.pollers?.length ?? 0) > 0 ? true : undefined;
    });
    const ask = () => (queryDeadlineMs === undefined ? h.query(pokedQuery) : up.connection.withDeadline(Date.now() + queryDeadlineMs, () => h.query(pokedQuery)));
    const answer = ask().then(
      (poked) => poked,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect((await onDead).query?.queryType).toBe('poked');
    // Well inside the Query's sticky wait, and early enough that the poke's own task (waiting unstarted on the dead
    // queue for as long) reaches the fresh worker after the Query does.
    await new Promise((r) => setTimeout(r, 1000));
    await h.signal(pokeSignal);
    const update = h.executeUpdate(noteUpdate);
    const answered = await answer;
    await update;
    return { answer: answered, history: await h.fetchHistory() };
  });
}

it("without Dipper's guards, a Query that waited out a dead worker's sticky queue answers from events no task has run, and the next task's Update cannot replay", async () => {
  const { answer, history } = await scenario('bare', up.bundlePath);
  if (answer !== true) throw upstreamChanged(`a Query that brings new history no longer runs it (answered ${JSON.stringify(answer)})`, 'The Query guards of workflows/interceptors.ts');
  const k = kinds(history);
  const timerAt = k.indexOf('timerStarted');
  expect(k.slice(timerAt - 1, timerAt + 3)).toEqual(['workflowTaskCompleted', 'timerStarted', 'workflowExecutionUpdateAccepted', 'workflowExecutionUpdateCompleted']);
  const failure = await replayFailure(up, history);
  if (failure === undefined) throw upstreamChanged("commands a Query's activation issued no longer go out ahead of the next task's Update", 'The Query guards of workflows/interceptors.ts');
  expect(failure).toMatch(/Nondeterminism error: Update machine does not handle this event: HistoryEvent\(id: \d+, TimerStarted\)/);
}, 60_000);

it("with Dipper's interceptors the same Query is refused, and the history replays", async () => {
  const bundle = await guardedProbeBundle();
  const { answer, history } = await scenario('guarded', bundle);
  // Without the guards the Query is answered (true) and the history fails replay as the first test's does.
  expect(await replayFailure(up, history, bundle)).toBeUndefined();
  expect(typeof answer).toBe('string');
  expect([QUERY_COLD, QUERY_REFUSED].some((m) => (answer as string).includes(m))).toBe(true);
  const k = kinds(history);
  // Replay's order live: the Update accepted first, the timer after it.
  const acceptedAt = k.indexOf('workflowExecutionUpdateAccepted');
  expect(acceptedAt).toBeGreaterThan(0);
  expect(k.indexOf('timerStarted')).toBeGreaterThan(acceptedAt);
}, 60_000);

it("with the gateway's Query deadline (queryCapMs) the Query gives up before the server moves it, and the history replays without any guard", async () => {
  const { answer, history } = await scenario('capped', up.bundlePath, queryCapMs(STICKY_TIMEOUT_S * 1000));
  // No answer: the caller was gone when the sticky wait ended.
  expect(typeof answer).toBe('string');
  expect(answer).not.toContain('dipper:');
  const k = kinds(history);
  const acceptedAt = k.indexOf('workflowExecutionUpdateAccepted');
  expect(acceptedAt).toBeGreaterThan(0);
  expect(k.indexOf('timerStarted')).toBeGreaterThan(acceptedAt);
  expect(await replayFailure(up, history)).toBeUndefined();
}, 60_000);
