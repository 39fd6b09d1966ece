import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { InboxWakes } from '../common/stores/inboxWakes';
import type { InboxWakeups, Watch } from '../registry/capabilities';


/**
 * Word, inside one gateway process, that an agent's inbox may have
 * something new. Two sources: this gateway's own deliveries (a message, a
 * sentinel, a report it just passed on), and the shared feed, where worker
 * activities publish every inbox change a workflow makes (and, with
 * PostgreSQL, other replicas publish their deliveries). A long poll waits
 * for a wake instead of asking Temporal on a timer.
 */
export class Wakeups implements InboxWakeups {
  private readonly emitter = new EventEmitter();
  /** This process, so the feed's echo of its own wakes is skipped. */
  private readonly origin = `gateway-${randomUUID()}`;
  private stopFeed: (() => Promise<void>) | undefined;

  constructor(private readonly feed?: InboxWakes) {
    // One listener per waiting poll; thousands of idle agents are normal.
    this.emitter.setMaxListeners(0);
  }

  /** Starts listening to the shared feed. */
  async start(): Promise<void> {
    if (this.feed) this.stopFeed = await this.feed.listen(this.origin, (key) => this.emitter.emit(key));
  }

  async stop(): Promise<void> {
    await this.stopFeed?.();
  }

  wake(runId: string, agentId: string): void {
    const key = `${runId}/${agentId}`;
    this.emitter.emit(key);
    // Across hosts (PostgreSQL's NOTIFY) a replica's own delivery reaches the others at once; on one host the
    // workflow's own wake follows within its event window, and a write to the shared file would hold this thread.
    if (this.feed?.nonBlocking) void this.feed.publish(this.origin, [key]).catch(() => undefined);
  }

  /** Starts counting wakes for one agent, before the caller looks at its inbox, so none slips between look and wait. */
  watch(runId: string, agentId: string): Watch {
    const key = `${runId}/${agentId}`;
    let woken = false;
    let release: (() => void) | undefined;
    const onWake = () => {
      woken = true;
      release?.();
    };
    this.emitter.on(key, onWake);
    return {
      next: (ms, signal) => {
        if (woken || signal?.aborted) {
          const was = woken;
          woken = false;
          return Promise.resolve(was);
        }
        return new Promise<boolean>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            release = undefined;
            signal?.removeEventListener('abort', done);
            const was = woken;
            woken = false;
            resolve(was);
          };
          const timer = setTimeout(done, ms);
          release = done;
          signal?.addEventListener('abort', done, { once: true });
        });
      },
      close: () => {
        this.emitter.off(key, onWake);
        release?.();
      },
    };
  }

  /** Resolves after ms, or earlier when the agent is woken or the signal aborts (a superseded or abandoned poll). */
  wait(runId: string, agentId: string, ms: number, signal?: AbortSignal): Promise<void> {
    const watch = this.watch(runId, agentId);
    return watch.next(ms, signal).then(() => watch.close());
  }
}
