import { condition, defineQuery, defineSignal, defineUpdate, ParentClosePolicy, setHandler, sleep, startChild, workflowInfo } from '@temporalio/workflow';

export const echoUpdate = defineUpdate<unknown, [unknown]>('echo');
export const echoCountQuery = defineQuery<number>('echoCount');
export const stopSignal = defineSignal('stop');

/**
 * What the floors ask of it. Nothing: wait for Updates, Queries and the stop
 * Signal. `returnAtOnce`: end in the first workflow task (a workflow start
 * with nothing to do). `lingerMs`: wait that long on a timer, then end.
 * `children`: start that many children, all in the first workflow task, and
 * end once every one has started; each lingers 10 s, so its parent hears of
 * its start and nothing else (a child that ended at once would send its
 * parent a second event, twice the events a member start brings a leader).
 */
export interface EchoInput {
  returnAtOnce?: boolean;
  lingerMs?: number;
  children?: number;
}

/**
 * The Temporal floors of `npm run bench`: an Update and a Query with no
 * state worth the name, so a beidou call's cost can be read against what
 * one round trip through the server and worker costs on the same machine;
 * and, with an input, a bare workflow start and a burst of child starts
 * (one type, so no deployment gains a workflow type for the bench).
 */
export async function echoWorkflow(input?: EchoInput): Promise<void> {
  if (input?.returnAtOnce) return;
  if (input?.lingerMs !== undefined) return sleep(input.lingerMs);
  if (input?.children !== undefined) {
    const { workflowId, taskTimeoutMs } = workflowInfo();
    await Promise.all(
      Array.from({ length: input.children }, (_, i) =>
        startChild(echoWorkflow, {
          workflowId: `${workflowId}/child-${i}`,
          args: [{ lingerMs: 10_000 }],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowTaskTimeout: taskTimeoutMs,
        }),
      ),
    );
    return;
  }
  let count = 0;
  let stopped = false;
  setHandler(echoUpdate, (value) => {
    count++;
    return value;
  });
  setHandler(echoCountQuery, () => count);
  setHandler(stopSignal, () => {
    stopped = true;
  });
  await condition(() => stopped);
}
