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
