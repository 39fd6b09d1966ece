/** A token pair as the token routes answer it. */
export interface TokenPair {
  token: string;
  refreshToken: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The Task service's token routes: issue (with the admin key) and refresh (with the agent's refresh token). */
export interface TokenRoutes {
  issue(agentId: string, channels: string[]): Promise<TokenPair | null>;
  refresh(agentId: string, refreshToken: string): Promise<TokenPair | null>;
}

/** The Task service refused to issue or refresh an agent's token. */
export class NoAgentToken extends Error {}

interface Held extends TokenPair {
  channels: Set<string>;
}

/** Agents whose tokens one process holds at once. */
const MAX_HELD = 10_000;

/** A token this close to its expiry is refreshed before use rather than sent to meet a 401. */
const EARLY_REFRESH_MS = 30_000;

/**
 * Per-agent Task API tokens, held in this process's memory only: never in
 * workflow history, events, logs or an agent's environment. A token is
 * issued with the boards the agent needs; a call that needs a board its
 * token was not issued with gets a new one that adds it.
 */
export class AgentTokens {
  private readonly held = new Map<string, Held>();
  private readonly pending = new Map<string, Promise<Held>>();

  constructor(
    private readonly routes: TokenRoutes,
    private readonly workspace: string,
    private readonly now: () => number = Date.now,
  ) {}

  async tokenFor(agent: { agentId: string; channels: string[] }): Promise<string> {
    // Twice at most: a token being obtained for another call may lack a board this one needs.
    for (let tries = 0; ; tries++) {
      const held = this.held.get(agent.agentId);
      const fits = held !== undefined && agent.channels.every((c) => held.channels.has(c));
      if (fits && held.expiresAt - EARLY_REFRESH_MS > this.now()) return held.token;
      const got = await this.obtain(agent, held);
      if (tries > 0 || agent.channels.every((c) => got.channels.has(c))) return got.token;
    }
  }

  /** After a 401: one new token for this agent, refreshed when it can be, issued anew otherwise. */
  async refresh(agent: { agentId: string; channels: string[] }): Promise<string> {
    const held = this.held.get(agent.agentId);
    if (held) held.expiresAt = 0;
    return (await this.obtain(agent, held)).token;
  }

  private obtain(agent: { agentId: string; channels: string[] }, held: Held | undefined): Promise<Held> {
    const inFlight = this.pending.get(agent.agentId);
    if (inFlight) return inFlight;
    const channels = new Set([...(held?.channels ?? []), ...agent.channels]);
    const needsGrant = agent.channels.some((c) => !held?.channels.has(c));
    const work = (async () => {
      let pair = held && !needsGrant ? await this.routes.refresh(agent.agentId, held.refreshToken) : null;
      pair ??= await this.routes.issue(agent.agentId, [...channels]);
      if (!pair) throw new NoAgentToken(`the Task service issued no token in workspace ${this.workspace}`);
      const fresh: Held = { ...pair, channels };
      // Bounded: the oldest agent's token goes first (it is issued again if that agent calls).
      if (!this.held.has(agent.agentId) && this.held.size >= MAX_HELD) this.held.delete(this.held.keys().next().value!);
      this.held.set(agent.agentId, fresh);
      return fresh;
    })().finally(() => this.pending.delete(agent.agentId));
    this.pending.set(agent.agentId, work);
    return work;
  }
}
