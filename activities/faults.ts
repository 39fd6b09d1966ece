import { ApplicationFailure } from '@temporalio/common';
import type { Fault } from '../src/config';

/**
 * Failures injected by configuration (DIPPER_FAULTS), for tests that prove
 * a workflow survives its activities failing: each named activity fails
 * with the given probability once its first `after` calls have passed, as
 * a retryable failure, before doing anything.
 * Empty in every real deployment; the worker logs it when it is not.
 */
export function withFaults<T extends Record<string, (...args: never[]) => Promise<unknown>>>(faults: Record<string, Fault>, activities: T): T {
  if (Object.keys(faults).length === 0) return activities;
  const wrapped: Record<string, unknown> = { ...activities };
  for (const [name, { probability, after }] of Object.entries(faults)) {
    const real = activities[name];
    if (!real) continue;
    let calls = 0;
    wrapped[name] = async (...args: never[]) => {
      if (++calls > after && Math.random() < probability) throw ApplicationFailure.retryable(`fault injected into ${name} (DIPPER_FAULTS)`, 'injected_fault');
      return real(...args);
    };
  }
  return wrapped as T;
}
