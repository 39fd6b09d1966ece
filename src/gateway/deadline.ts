import { AsyncLocalStorage } from 'node:async_hooks';
import { unavailable } from './serviceErrors';

/**
 * The moment by which the call being served must be answered. Carried
 * implicitly so every Temporal call a tool handler makes, however deep,
 * shares its caller's deadline without the registry passing it along.
 */
const current = new AsyncLocalStorage<number>();

export function callDeadline(): number | undefined {
  return current.getStore();
}

/** Runs fn under its own deadline, e.g. a delivery batch that outlives the call that started it. */
export function underDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  return current.run(deadline, fn);
}

/**
 * Runs fn with a deadline ms from now and answers `unavailable` if fn has
 * not settled by then: the bound holds even for waits no Temporal deadline
 * covers (a message queued behind a delivery that hangs).
 */
export async function answerWithin<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + ms;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable()), ms);
  });
  try {
    return await Promise.race([current.run(deadline, fn), late]);
  } finally {
    clearTimeout(timer);
  }
}
