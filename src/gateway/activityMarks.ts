import { activitySignal } from '../../workflows/agent/messages';
import type { Logger } from '../log';
import { safeMessage } from '../log';
import type { TeamClient } from './teamClient';

/** Entries kept before old ones are swept; far above the agents one replica serves at once. */
const SWEEP_ABOVE = 10_000;

/**
 * Watchdog pass B needs each agent's last tool call, and reads are Queries
 * its workflow never sees. So the gateway tells the workflow, at most once
 * per interval per agent (per replica): a signal every few seconds at
 * most, never one per call. A mark that fails is only a missed mark.
 */
export class ActivityMarks {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly team: TeamClient,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  mark(runId: string, agentId: string): void {
    if (this.intervalMs <= 0) return;
    const key = `${runId}/${agentId}`;
    const now = Date.now();
    const before = this.last.get(key);
    if (before !== undefined && now - before < this.intervalMs) return;
    this.last.set(key, now);
    if (this.last.size > SWEEP_ABOVE) this.sweep(now);
    this.team
      .agent(runId, agentId)
      .signal(activitySignal)
      .catch((err: unknown) => this.log.debug({ run: runId, agent: agentId, err: safeMessage(err) }, 'activity mark not sent'));
  }

  private sweep(now: number): void {
    for (const [key, at] of this.last) if (now - at >= this.intervalMs) this.last.delete(key);
  }
}
