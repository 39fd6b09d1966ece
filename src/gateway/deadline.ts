import { callDeadline, underDeadline } from '../temporal';
import { unavailable } from '../common/serviceErrors';

// The call deadline itself lives with the rest of the deadline policy (src/temporal/deadlines.ts).
export { callDeadline, underDeadline };

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
    return await Promise.race([underDeadline(deadline, fn), late]);
  } finally {
    clearTimeout(timer);
  }
}
