import { EventEmitter } from 'node:events';

/**
 * Hints, inside one gateway process, that an agent's inbox may have
 * something new: a message this gateway just delivered, a sentinel it just
 * posted, a child's report it just passed on. A long poll waiting on that inbox looks again at once instead of
 * at its next pause. Only a hint: polls on other replicas, and items that
 * workflows add themselves, are still found by polling.
 */
export class Wakeups {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per waiting poll; thousands of idle agents are normal.
    this.emitter.setMaxListeners(0);
  }

  wake(runId: string, agentId: string): void {
    this.emitter.emit(`${runId}/${agentId}`);
  }

  /** Resolves after ms, or earlier when the agent is woken or the signal aborts (a superseded or abandoned poll). */
  wait(runId: string, agentId: string, ms: number, signal?: AbortSignal): Promise<void> {
    const key = `${runId}/${agentId}`;
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(key, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.emitter.once(key, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
