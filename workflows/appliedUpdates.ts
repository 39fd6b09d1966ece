import { currentUpdateInfo, setHandler } from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';

/** An Update this workflow applied, with what it answered. */
export interface AppliedUpdate {
  id: string;
  at: number;
  answer: unknown;
}

/**
 * How long after an Update a gateway may still send it again: its retries
 * stop at the call's deadline (15 s by default); a minute leaves room.
 */
const CARRY_MS = 60_000;
/** Kept in memory, newest last; more than a minute of calls to one agent is rare. */
const KEEP = 256;
/** What the answers may add to the continue-as-new input. */
const CARRY_CHARS = 128 * 1024;

/**
 * Temporal drops a repeated Update id within one run of a workflow, but a
 * new run (after continue-as-new) applies it again. A gateway that lost an
 * answer sends the same Update id again, and if the workflow moved on in
 * between, a plan would be declared twice (answered plan_already_declared),
 * a spawn refused as task_not_pending, a child terminated twice. The ids and
 * answers of the last minute's Updates travel through continue-as-new, and
 * an Update the previous run applied gets that run's answer again.
 */
export class AppliedUpdates {
  private readonly recent: AppliedUpdate[];
  private readonly earlierRuns: Map<string, unknown>;

  constructor(carried: AppliedUpdate[] = []) {
    this.recent = [...carried];
    this.earlierRuns = new Map(carried.map((u) => [u.id, u.answer]));
  }

  /** The answer the previous run gave to the Update being handled, if it applied it. */
  earlier(): { answer: unknown } | undefined {
    const id = currentUpdateInfo()?.id;
    return id !== undefined && this.earlierRuns.has(id) ? { answer: this.earlierRuns.get(id) } : undefined;
  }

  note(answer: unknown, now: number): void {
    const id = currentUpdateInfo()?.id;
    if (id === undefined) return;
    this.recent.push({ id, at: now, answer });
    if (this.recent.length > KEEP) this.recent.splice(0, this.recent.length - KEEP);
  }

  /** The last minute's Updates, newest first while they fit; an answer too large to carry is left out (its retry is judged anew). */
  forCarry(now: number): AppliedUpdate[] {
    const out: AppliedUpdate[] = [];
    let chars = 0;
    for (let i = this.recent.length - 1; i >= 0; i--) {
      const u = this.recent[i];
      if (u.at < now - CARRY_MS) break;
      const size = JSON.stringify(u).length;
      if (chars + size > CARRY_CHARS) continue;
      chars += size;
      out.push(u);
    }
    return out.reverse();
  }
}

/**
 * setHandler for an Update that must not be applied twice across runs: an
 * id the previous run applied skips the validator and gets its answer.
 * A handler that answers at once still answers at once: the answer is
 * noted on the side, so the Update completes at the same point of the
 * workflow task as it always did.
 */
export function setUpdateOnce<Ret, Args extends unknown[]>(
  applied: AppliedUpdates,
  def: UpdateDefinition<Ret, Args>,
  handler: (...args: Args) => Ret | Promise<Ret>,
  options: { validator?: (...args: Args) => void } = {},
): void {
  const validator = options.validator;
  setHandler(
    def,
    (...args: Args): Ret | Promise<Ret> => {
      const earlier = applied.earlier();
      if (earlier) return earlier.answer as Ret;
      const answer = handler(...args);
      if (answer instanceof Promise) return answer.then((a) => (applied.note(a, Date.now()), a));
      applied.note(answer, Date.now());
      return answer;
    },
    validator ? { validator: (...args: Args) => void (applied.earlier() ?? validator(...args)) } : {},
  );
}
