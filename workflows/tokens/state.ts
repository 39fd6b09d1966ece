import { ALL_GENERATIONS, revocationKey, type Revocation, type RevocationsView, type RevokedEntry } from '../../src/common/pure/revocations';

type Entry = RevokedEntry & { v: number };

/** The registry's entries, numbered by the version that last changed each, so a replica asks only for what changed. */
export class RevocationState {
  private readonly entries: Map<string, Entry>;
  private version: number;

  constructor(entries: Entry[] = [], version = 0) {
    this.entries = new Map(entries.map((e) => [e.key, e]));
    this.version = version;
  }

  /** A revocation only ever widens: a late, narrower one (an older relaunch) changes nothing. */
  revoke(r: Revocation): void {
    const key = revocationKey(r.runId, r.agentId);
    const below = r.belowGen ?? ALL_GENERATIONS;
    const known = this.entries.get(key);
    if (known && known.below >= below) return;
    this.version++;
    this.entries.set(key, { key, below, at: Math.max(r.at, known?.at ?? 0), v: this.version });
  }

  since(version = 0): RevocationsView {
    return {
      version: this.version,
      entries: [...this.entries.values()].filter((e) => e.v > version).map(({ key, below, at }) => ({ key, below, at })),
    };
  }

  /** What the next run carries: entries recorded after `keepAfter` (ms since the epoch); older tokens have all expired. */
  carried(keepAfter: number): { entries: Entry[]; version: number } {
    return { entries: [...this.entries.values()].filter((e) => e.at >= keepAfter), version: this.version };
  }
}
