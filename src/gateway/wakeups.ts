import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { InboxWakes } from '../common/stores/inboxWakes';
import type { AgentStatus, InboxItem } from '../../workflows/types';
import type { HandedItem, InboxWakeups, Watch } from '../registry/capabilities';

/** How long handed news is kept: its waiters read it within moments of the wake. */
const NEWS_MS = 60_000;
/** Delivered items kept per agent for its long poll: more in a moment and the poll asks its workflow instead. */
const ITEMS_KEPT = 32;


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
  /** What hand() carried, by key. */
  private readonly news = new Map<string, unknown>();
  /** Items this process delivered lately, by `<run>/<agent>`, oldest first. */
  private readonly items = new Map<string, HandedItem[]>();
  /** Calls under way that will hand news, by key (bringing). */
  private readonly bringers = new Map<string, Set<Promise<void>>>();

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

  hand(runId: string, key: string, news: unknown): void {
    const at = `${runId}/${key}`;
    this.news.set(at, news);
    // Read by the waiters woken now; forgotten after a minute, and a later hand for the key replaces it.
    setTimeout(() => this.news.get(at) === news && this.news.delete(at), NEWS_MS).unref();
    this.wake(runId, key);
  }

  delivered(runId: string, agentId: string, items: HandedItem[]): void {
    const key = `${runId}/${agentId}`;
    if (items.length > 0) {
      const kept = [...(this.items.get(key) ?? []), ...items].slice(-ITEMS_KEPT);
      this.items.set(key, kept);
      // Forgotten a minute on, unless newer ones came since (their own timer does it then).
      setTimeout(() => this.items.get(key) === kept && this.items.delete(key), NEWS_MS).unref();
    }
    this.wake(runId, agentId);
  }

  /**
   * The items after `cursor` that this process delivered and that are
   * known to be all there is to read after it: each was put when nothing
   * newer than the cursor, or than the item before it here, was pending
   * (InboxNews.before). Empty when that is not known: the caller then asks
   * the workflow. `cursor` must be where a look at the workflow found
   * nothing pending after it.
   */
  deliveredAfter(runId: string, agentId: string, cursor: number, limit: number): { items: InboxItem[]; status: AgentStatus } | undefined {
    const kept = (this.items.get(`${runId}/${agentId}`) ?? []).filter((h) => h.news.seq > cursor).sort((a, b) => a.news.seq - b.news.seq);
    const out: HandedItem[] = [];
    let last = cursor;
    for (const handed of kept) {
      if (out.length >= limit || handed.news.before > last) break;
      out.push(handed);
      last = handed.news.seq;
    }
    return out.length > 0 ? { items: out.map((h) => h.item), status: out.at(-1)!.news.status } : undefined;
  }

  handed(runId: string, key: string): unknown {
    return this.news.get(`${runId}/${key}`);
  }

  bring<T>(runId: string, key: string, call: () => Promise<T>, newsOf: (result: T) => unknown): Promise<T> {
    const at = `${runId}/${key}`;
    // Handed before the call counts as settled, so a waiter that saw it coming finds the news.
    const made = call().then((result) => {
      const news = newsOf(result);
      if (news === undefined) this.wake(runId, key);
      else this.hand(runId, key, news);
      return result;
    });
    const settled = made.then(
      () => undefined,
      () => undefined,
    );
    const all = this.bringers.get(at) ?? new Set<Promise<void>>();
    all.add(settled);
    this.bringers.set(at, all);
    void settled.then(() => {
      all.delete(settled);
      if (all.size === 0 && this.bringers.get(at) === all) this.bringers.delete(at);
    });
    return made;
  }

  async coming(runId: string, key: string): Promise<void> {
    const all = this.bringers.get(`${runId}/${key}`);
    if (all) await Promise.all([...all]);
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
