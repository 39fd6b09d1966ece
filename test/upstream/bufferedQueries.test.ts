import { randomUUID } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import { readTestEnv } from '../setup/env';
import { loadTemporalDevConfig } from '../../src/devstack/devConfig';
import { busyWorkflow } from '../../src/temporal/retry';
import { projectRoot } from '../support/processes';
import { probeId } from './harness';

/**
 * Upstream behaviour: a Query that comes while one of its workflow's tasks
 * runs waits for that task in a buffer of the workflow's (history's
 * `queryworkflow` API; the next task carries it). The buffer holds
 * `history.MaxBufferedQueryCount` Queries, 1 by default: a second one is
 * refused RESOURCE_EXHAUSTED ("BusyWorkflow") at once, and the client SDK
 * asks again after a backoff. Dipper's reads come side by side all the
 * time (a read beside the review gate's check, many agents reading one
 * run's directory); at the default, list_ready right after spawn_agent
 * (whose step is still ending when it answers) waited over two seconds
 * (bench/trace.ts spawn_then_read: 2,329-2,342 ms; 107-122 ms raised).
 *
 * The workflow here has no worker: this test takes its tasks by hand and
 * holds one while two Queries come, sent without the client's retries so a
 * refusal shows. The server under test runs Dipper's dynamic config
 * (temporal-config/): the two must both wait and be carried by the next
 * task.
 *
 * Setting it justifies: `history.MaxBufferedQueryCount` in
 * temporal-config/dev-server.json and dynamicconfig/production.yaml. The
 * refusal past the buffer is also where the client reads a busy workflow's
 * cause, which src/temporal/retry.ts answers with a short wait.
 */
const ANSWERED = 1; // QUERY_RESULT_TYPE_ANSWERED
const RESOURCE_EXHAUSTED = 8;

let connection: Connection;
beforeAll(async () => {
  // No retry interceptor: a refused Query fails here instead of being asked again.
  connection = await Connection.connect({ address: readTestEnv().temporalAddress, interceptors: [] });
});
afterAll(async () => connection?.close());

it('holds two Queries that come while a workflow task runs, and the next task carries both', async () => {
  const namespace = readTestEnv().namespace;
  const svc = connection.workflowService;
  const withDeadline = <T>(fn: () => Promise<T>) => connection.withDeadline(Date.now() + 30_000, fn);
  // A task's answers to the Queries it carried: each its own name.
  const answersTo = (task: { queries?: Record<string, { queryType?: string | null }> | null }) =>
    Object.fromEntries(
      Object.entries(task.queries ?? {}).map(([key, q]) => [key, { resultType: ANSWERED, answer: { payloads: [{ metadata: { encoding: Buffer.from('binary/plain') }, data: Buffer.from(q.queryType ?? '') }] } }]),
    );
  const id = probeId('buffered-queries');
  const execution = { workflowId: id };
  const poll = () => withDeadline(() => svc.pollWorkflowTaskQueue({ namespace, taskQueue: { name: id }, identity: 'by hand' }));
  const complete = (taskToken: Uint8Array | null | undefined, queryResults: ReturnType<typeof answersTo> = {}) =>
    withDeadline(() => svc.respondWorkflowTaskCompleted({ namespace, taskToken, identity: 'by hand', commands: [], queryResults }));
  const signal = () => withDeadline(() => svc.signalWorkflowExecution({ namespace, workflowExecution: execution, signalName: 'poke', identity: 'by hand', requestId: randomUUID() }));
  const describe = () => withDeadline(() => svc.describeWorkflowExecution({ namespace, execution }));

  await withDeadline(() =>
    svc.startWorkflowExecution({ namespace, workflowId: id, workflowType: { name: 'byHand' }, taskQueue: { name: id }, identity: 'by hand', requestId: randomUUID() }),
  );
  try {
    // A task completed first: before that, the server holds every Query for the first task whatever the buffer.
    await complete((await poll()).taskToken);
    const ask = (queryType: string) =>
      withDeadline(() => svc.queryWorkflow({ namespace, execution, query: { queryType } })).then(
        (res): { answer?: string; refused?: number } => ({ answer: Buffer.from(res.queryResult?.payloads?.[0]?.data ?? []).toString() }),
        (err: { code?: number }) => ({ refused: err.code }),
      );
    // Each round holds a task while two Queries come, a little longer than the round before, until one task carries both.
    let together = false;
    for (let round = 1; !together; round++) {
      if (round > 8) throw new Error('the two Queries never came while one task ran');
      await signal();
      let task = await poll();
      const asked = new Map(['first', 'second'].map((q): [string, ReturnType<typeof ask>] => [`${q}-${round}`, ask(`${q}-${round}`)]));
      for (let i = 0; i < 2 ** round; i++) await describe();
      // Refused while the task runs, a Query has its answer already; held, it has none until a task answers it.
      for (const [name, pending] of asked) {
        const early = await Promise.race([pending, describe().then(() => undefined)]);
        if (early?.refused === RESOURCE_EXHAUSTED) throw new Error(`Query ${name} was refused while a task ran (RESOURCE_EXHAUSTED): the buffer holds one`);
      }
      // Each task is completed with a signal sent first, so another follows and carries the Queries that waited (none
      // ever finds no task running and goes to the queue); each answers what it carried.
      const left = new Set(asked.keys());
      while (left.size > 0) {
        await signal();
        await complete(task.taskToken, answersTo(task));
        task = await poll();
        const carried = Object.values(task.queries ?? {}).map((q) => q.queryType!);
        together ||= carried.length === 2;
        for (const q of carried) left.delete(q);
      }
      await complete(task.taskToken, answersTo(task));
      for (const [name, pending] of asked) expect(await pending).toEqual({ answer: name });
    }
  } finally {
    await withDeadline(() => svc.terminateWorkflowExecution({ namespace, workflowExecution: execution, reason: 'test/upstream: done', identity: 'by hand' })).catch(() => undefined);
  }
});

it('refuses the Query past the buffer as a busy workflow, the cause Dipper\'s retries read from the status details', async () => {
  const namespace = readTestEnv().namespace;
  const svc = connection.workflowService;
  const withDeadline = <T>(fn: () => Promise<T>) => connection.withDeadline(Date.now() + 30_000, fn);
  const buffer = Number(loadTemporalDevConfig(projectRoot).dynamicConfig['history.MaxBufferedQueryCount']);
  const id = probeId('buffer-full');
  const execution = { workflowId: id };
  const poll = () => withDeadline(() => svc.pollWorkflowTaskQueue({ namespace, taskQueue: { name: id }, identity: 'by hand' }));
  await withDeadline(() => svc.startWorkflowExecution({ namespace, workflowId: id, workflowType: { name: 'byHand' }, taskQueue: { name: id }, identity: 'by hand', requestId: randomUUID() }));
  try {
    const first = await poll();
    await withDeadline(() => svc.respondWorkflowTaskCompleted({ namespace, taskToken: first.taskToken, identity: 'by hand', commands: [] }));
    await withDeadline(() => svc.signalWorkflowExecution({ namespace, workflowExecution: execution, signalName: 'poke', identity: 'by hand', requestId: randomUUID() }));
    const held = await poll();
    // One Query more than the buffer holds, while the task is held: one of them is refused at once, the others wait
    // for a task that never comes (no worker polls this queue) and end with the connection.
    const sent = Array.from({ length: buffer + 1 }, (_, i) =>
      withDeadline(() => svc.queryWorkflow({ namespace, execution, query: { queryType: `q${i}` } })).then(
        () => ({ answered: true }) as const,
        (err: { code?: number; metadata?: Metadata }) => err,
      ),
    );
    const refusal = await Promise.race(sent);
    if ('answered' in refusal) throw new Error('a Query was answered while its workflow task was held');
    expect(refusal.code).toBe(RESOURCE_EXHAUSTED);
    expect(busyWorkflow({ metadata: refusal.metadata! })).toBe(true);
    expect(held.startedEventId).toBeTruthy();
  } finally {
    await withDeadline(() => svc.terminateWorkflowExecution({ namespace, workflowExecution: execution, reason: 'test/upstream: done', identity: 'by hand' })).catch(() => undefined);
  }
});
