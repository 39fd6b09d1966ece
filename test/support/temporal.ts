import { Client, Connection } from '@temporalio/client';
import { HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';

/** A Temporal client on the test server, for tests that read histories or visibility; close it in afterAll. */
export async function connectTemporal(): Promise<{ client: Client; close: () => Promise<void> }> {
  const env = readTestEnv();
  const connection = await Connection.connect({ address: env.temporalAddress, channelArgs: HISTORY_CHANNEL_ARGS });
  return { client: new Client({ connection, namespace: env.namespace }), close: () => connection.close() };
}
