import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import fs from 'node:fs';
import path from 'node:path';
import { HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';
import { sdkTls, tlsFromEnv } from '../../src/temporal/tls';

/** The test server and its TLS, as the shared stack reaches it (a cluster's server takes mutual TLS only). */
export function temporalTargetOf(env = readTestEnv()) {
  return { address: env.temporalAddress, ...sdkTls(tlsFromEnv(env.processEnv)) };
}

/** A Temporal client on the test server, for tests that read histories or visibility; close it in afterAll. */
export async function connectTemporal(): Promise<{ client: Client; close: () => Promise<void> }> {
  const env = readTestEnv();
  const connection = await Connection.connect({ ...temporalTargetOf(env), channelArgs: HISTORY_CHANNEL_ARGS });
  return { client: new Client({ connection, namespace: env.namespace }), close: () => connection.close() };
}

/**
 * A Temporal client for a whole test file: opened before its tests, closed
 * after them, once `also` (the file's own clean-up) has run.
 */
export function temporalForFile(also: () => Promise<void> = async () => undefined): { readonly client: Client } {
  let opened: { client: Client; close: () => Promise<void> } | undefined;
  beforeAll(async () => {
    opened = await connectTemporal();
  });
  afterAll(async () => {
    await also();
    await opened?.close();
  });
  return {
    get client() {
      return opened!.client;
    },
  };
}

/**
 * Waits until the server holds Update `updateId` for the workflow's next task (admitted), with no worker to take it.
 * Admitted shows as a poll for the Update that waits out its deadline (this dev server cannot be asked to answer at
 * admission) rather than one refused for an unknown update. Sending a second Update only after the first is admitted
 * puts both, in that order, in one workflow task when a worker comes back.
 */
export async function updateAdmitted(client: Client, workflowId: string, updateId: string, within = 20_000): Promise<void> {
  const until = Date.now() + within;
  for (;;) {
    try {
      await client.connection.withDeadline(Date.now() + 300, () =>
        client.workflowService.pollWorkflowExecutionUpdate({
          namespace: client.options.namespace,
          updateRef: { workflowExecution: { workflowId }, updateId },
          waitPolicy: { lifecycleStage: temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED },
          identity: 'dipper-tests',
        }),
      );
      return;
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === 4) return; // DEADLINE_EXCEEDED: admitted, waiting for a worker
      // NOT_FOUND: not admitted yet. CANCELLED: the client gave the call up at its deadline before the server said
      // either (seen on a loaded machine); ask again.
      if (code !== 5 && code !== 1) throw err;
    }
    if (Date.now() > until) throw new Error(`update ${updateId} was never admitted`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A history of the recorded set (test/replay/histories) whose file name contains `part`; the set is recorded again whenever workflows change, so names carry new ids. */
export function recordedHistory(part: string): string {
  const dir = path.join(__dirname, '..', 'replay', 'histories');
  const found = fs.readdirSync(dir).filter((f) => f.includes(part)).sort()[0];
  if (!found) throw new Error(`no recorded history named like ${part}`);
  return path.join(dir, found);
}
