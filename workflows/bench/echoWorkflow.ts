import { condition, defineQuery, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';

export const echoUpdate = defineUpdate<unknown, [unknown]>('echo');
export const echoCountQuery = defineQuery<number>('echoCount');
export const stopSignal = defineSignal('stop');

/**
 * The Temporal floor of `npm run bench`: an Update and a Query with no
 * state worth the name, so a beidou call's cost can be read against what
 * one round trip through the server and worker costs on the same machine.
 */
export async function echoWorkflow(): Promise<void> {
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
