import type { AgentClaims } from '../auth/tokens';
import type { RevokedTokens } from '../common/stores/revokedTokens';
import type { Logger } from '../log';
import { isNotFound, underDeadline, type Temporal } from '../temporal';
import { safeMessage } from '../log';
import { revocationKey, revocationsQuery, tokenRegistryId, type RevocationsView } from '../common/pure/revocations';

/**
 * Where a replica learns which tokens were revoked. Today the task queue's
 * token registry workflow; a shared database can stand behind the same
 * interface when replicas move to it.
 */
export interface RevocationSource {
  /** What changed after `version`; everything when 0. */
  since(version: number): Promise<RevocationsView>;
}

export class TemporalRevocationSource implements RevocationSource {
  private readonly workflowId: string;

  constructor(
    private readonly temporal: Temporal,
    taskQueue: string,
    private readonly deadlineMs: number,
  ) {
    this.workflowId = tokenRegistryId(taskQueue);
  }

  async since(version: number): Promise<RevocationsView> {
    try {
      return await underDeadline(Date.now() + this.deadlineMs, () => this.temporal.handle(this.workflowId).query(revocationsQuery, version));
    } catch (err) {
      // No registry yet: nothing has been revoked on this task queue.
      if (isNotFound(err)) return { version: 0, entries: [] };
      throw err;
    }
  }
}

export type Verdict = 'valid' | 'revoked' | 'unknown';

/** The longest a call waits for the store's answer before it is refused as unconfirmed (a server out of reach). */
const STORE_WAIT_MS = 1000;

/**
 * One replica's word on a token. The shared store's table decides: every
 * revocation is written there before the answer that makes it true, and
 * each check reads it (an indexed read of the events file, or one query to
 * PostgreSQL), so no call is accepted in the moment after such an answer,
 * on any replica. A table that cannot be read makes the verdict `unknown`,
 * and the caller refuses: a replica that cannot see revocations does not
 * guess. The copy of the token registry's list, refreshed every
 * `refreshMs`, is a fast path only: a token it holds revoked is refused
 * without the read, however old the copy (revocations only widen); a stale
 * copy no longer refuses anything, since it is not what decides (a busy
 * worker slow to answer the registry's Query once failed every agent call).
 */
export class RevocationView {
  private readonly below = new Map<string, { below: number; at: number }>();
  private version = 0;
  private refreshedAt = Number.NEGATIVE_INFINITY;

  /** Seconds since the list was last read (Infinity before the first read). */
  ageSeconds(now = performance.now()): number {
    return (now - this.refreshedAt) / 1000;
  }
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failing = false;
  private failures = 0;
  private prunedAt = 0;

  private storeFailing = false;

  constructor(
    private readonly source: RevocationSource,
    private readonly opts: { refreshMs: number; waitMs: number; tokenTtlSeconds: number },
    private readonly log: Logger,
    private readonly store: Pick<RevokedTokens, 'below'>,
  ) {}

  /** Loads the list once (best effort: a replica that starts during an outage refuses until it can), then keeps it fresh. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The verdict a call acts on: the fast path's, or else the table's. */
  async check(claims: AgentClaims): Promise<Verdict> {
    if (this.listedRevoked(claims)) return 'revoked';
    return this.stored(claims);
  }

  /** The store's word on a token; `unknown` when it cannot be read within a stale list's wait. */
  private async stored(claims: AgentClaims): Promise<Verdict> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the revocations table did not answer in time')), Math.max(this.opts.waitMs, STORE_WAIT_MS));
    });
    try {
      const below = await Promise.race([this.store.below(claims.run_id, claims.agent_id), late]);
      if (this.storeFailing) this.log.info('token revocations table readable again');
      this.storeFailing = false;
      return claims.gen < below ? 'revoked' : 'valid';
    } catch (err) {
      if (!this.storeFailing) this.log.warn({ err: safeMessage(err) }, 'cannot read the token revocations table; agent calls are refused until it can');
      this.storeFailing = true;
      return 'unknown';
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether the copy of the registry's list holds the token revoked (the fast path; a revocation never narrows, so an old copy is still right). */
  listedRevoked(claims: AgentClaims): boolean {
    const run = this.below.get(revocationKey(claims.run_id));
    const agent = this.below.get(revocationKey(claims.run_id, claims.agent_id));
    return Boolean((run && claims.gen < run.below) || (agent && claims.gen < agent.below));
  }

  /** After a failed refresh the next comes sooner (50, 100, 200 ms, then the usual pace): one slow answer should not cost a whole period. */
  private schedule(): void {
    if (this.stopped) return;
    const wait = this.failures === 0 ? this.opts.refreshMs : Math.min(this.opts.refreshMs, 25 * 2 ** this.failures);
    this.timer = setTimeout(() => void this.refresh().finally(() => this.schedule()), wait);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    const asked = performance.now();
    try {
      let view = await this.source.since(this.version);
      // The registry started over (someone ended it): take its list whole rather than keep a version it no longer has.
      if (view.version < this.version) {
        this.below.clear();
        view = await this.source.since(0);
      }
      for (const e of view.entries) this.below.set(e.key, { below: e.below, at: e.at });
      this.version = view.version;
      // Fresh as of when it was asked, not when the answer came.
      this.refreshedAt = asked;
      this.prune();
      if (this.failing) this.log.info('the copy of the token registry refreshes again');
      this.failing = false;
      this.failures = 0;
    } catch (err) {
      this.failures++;
      if (!this.failing) this.log.info({ err: safeMessage(err) }, 'cannot refresh the copy of the token registry (the shared table still decides every call)');
      this.failing = true;
    }
  }

  /** Entries whose every token has expired need not be kept. */
  private prune(): void {
    if (Date.now() - this.prunedAt < 60_000) return;
    this.prunedAt = Date.now();
    const keepAfter = Date.now() - this.opts.tokenTtlSeconds * 1000;
    for (const [key, e] of this.below) if (e.at < keepAfter) this.below.delete(key);
  }
}
