import { AgentClient } from '../../src/client/agent';
export { AgentClient, type ToolOutcome } from '../../src/client/agent';
export { Operator } from '../../src/client/operator';

/** Polls until check returns a value that is not undefined; events and directory updates are asynchronous. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * The whole inbox, or undefined while the gateway answers 503 with a retryable error (just after a worker restart it
 * may not yet confirm tokens or reach the workflow): for `eventually`, as a runtime would ask again.
 */
export async function inboxUnlessRetry(client: AgentClient) {
  return client.inbox(0, 0).catch((err: unknown) => {
    if (/\b503\b.*"retryable":true/.test(String(err))) return undefined;
    throw err;
  });
}
