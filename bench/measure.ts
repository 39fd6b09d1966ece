import type { Temporal } from '../src/temporal';
import type { Agents } from './client';

/**
 * What each scenario's figures are read against: the no-op tool, the same
 * no-op answering as many bytes as list_peers over the large run
 * (`noopBytes`), a bare Update and Query, a bare workflow start and its
 * result (`start`), and 100 child starts issued in one workflow task
 * (`children`).
 */
export type Floor = 'noop' | 'noopBytes' | 'update' | 'query' | 'start' | 'children';

/** How many calls each scenario makes; `--quick` shrinks them about tenfold. */
export interface Counts {
  /** Calls made before timing starts, in each sequential scenario. */
  warmup: number;
  noop: number;
  update: number;
  query: number;
  send: number;
  peers: number;
  spawn: number;
  /** Bare workflow starts (the start floor). */
  starts: number;
  /** Bursts of 100 child starts (the child-start floor). */
  childBursts: number;
  /** ask_user round trips per row. */
  ask: number;
  bursts: number;
  /** Agents in the large list_peers run. */
  bigRun: number;
  /** Length of each idle-cost window. */
  idleSeconds: number;
}

/** One line of the report: the timed samples (ms) and the calls that failed, warm-up included. */
export class Row {
  readonly samples: number[] = [];
  errors = 0;
  firstError: string | undefined;

  constructor(
    readonly name: string,
    /** The floors this row is divided by; a floor row names only itself. */
    readonly against: Floor[],
    /** Set on the floor rows. */
    readonly floor?: Floor,
  ) {}

  /** Times one call; a failed call is counted, never timed. Returns the time, or undefined on failure. */
  async time(call: () => Promise<unknown>, keep = true): Promise<number | undefined> {
    const started = performance.now();
    try {
      await call();
    } catch (err) {
      this.fail(err);
      return undefined;
    }
    const ms = performance.now() - started;
    if (keep) this.samples.push(ms);
    return ms;
  }

  fail(err: unknown): void {
    this.errors++;
    this.firstError ??= err instanceof Error ? err.message : String(err);
  }
}

export interface BenchContext {
  agents: Agents;
  temporal: Temporal;
  taskQueue: string;
  counts: Counts;
  /** A new row, in the report in the order rows are made. */
  row(name: string, against: Floor[], floor?: Floor): Row;
}

/** One call after another: `warmup` untimed calls, then `count` timed ones. */
export async function sequential(row: Row, warmup: number, count: number, call: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < warmup + count; i++) await row.time(() => call(i), i >= warmup);
}

/** Fails the call when its answer is not the expected one, so a wrong answer counts as an error. */
export function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}
