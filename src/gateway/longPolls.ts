/**
 * The long polls one gateway replica holds, per agent. Over the cap the
 * oldest is superseded rather than the newest refused: a runtime that
 * restarts (or loses its connection without the gateway noticing) polls
 * again at once, and must not wait out its own ghost. The superseded poll
 * is told so, and it never cost more than the Queries it already made.
 */
export class LongPolls {
  private readonly byAgent = new Map<string, AbortController[]>();

  constructor(private readonly cap: number) {}

  /** Polls held now, over every agent. */
  held(): number {
    let n = 0;
    for (const polls of this.byAgent.values()) n += polls.length;
    return n;
  }

  /** Registers a poll; its signal aborts when a newer poll supersedes it. Call leave() when it answers. */
  enter(key: string): { signal: AbortSignal; leave: () => void } {
    let polls = this.byAgent.get(key);
    if (!polls) {
      polls = [];
      this.byAgent.set(key, polls);
    }
    const own = new AbortController();
    polls.push(own);
    while (polls.length > this.cap) polls.shift()!.abort();
    const list = polls;
    return {
      signal: own.signal,
      leave: () => {
        const at = list.indexOf(own);
        if (at >= 0) list.splice(at, 1);
        if (list.length === 0 && this.byAgent.get(key) === list) this.byAgent.delete(key);
      },
    };
  }
}
