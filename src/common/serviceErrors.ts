import { ToolError } from './toolErrors';

/**
 * Failures of Dipper's own capacity or health rather than of the call: the
 * same code whichever door the call came through, rendered as a tool error
 * on MCP and with its own HTTP status elsewhere.
 */

/** What callers are told to wait before trying again during an outage: about what a restart of Temporal or a worker takes to begin. */
export const OUTAGE_RETRY_MS = 1000;

/**
 * `unavailable` where Dipper knows the call changed nothing (it never left the gateway): a change answered so can be
 * repeated as it is. Any other `unavailable` of a beidou call that changes state is answered `outcome_unknown`.
 */
export class NothingDone extends ToolError {}

export function unavailable(): ToolError {
  return new ToolError(
    'unavailable',
    'Dipper could not get an answer in time: Temporal or its worker is down or overloaded. Retry shortly; a call that changes state may already have taken effect.',
    { retry_after_ms: OUTAGE_RETRY_MS },
    true,
  );
}

/** `unavailable` for a change that certainly was not made (it was never sent). */
export function notSent(): ToolError {
  return new NothingDone('unavailable', 'Dipper could not get an answer in time, and this change was not made. Retry shortly.', { retry_after_ms: OUTAGE_RETRY_MS }, true);
}

/**
 * A change that got no answer in time and may or may not have been made: the Update may have reached the workflow
 * (it is applied when a worker takes it). `repeatable` when the tool's own idempotency makes a repeat safe (a key
 * given, a receipt, a desired state); a repeat of anything else may do the change twice.
 */
export function outcomeUnknown(repeatable: boolean): ToolError {
  const what = repeatable
    ? 'Repeating the same call is safe: it is answered with the first outcome and does nothing twice.'
    : 'Repeating the call may make the change twice; check first where you can (send_message: give an idempotency_key, and a repeat is delivered once).';
  return new ToolError(
    'outcome_unknown',
    `Dipper got no answer in time: Temporal or its worker is down or overloaded, and this change may or may not have been made. ${what}`,
    { retry_after_ms: OUTAGE_RETRY_MS },
    repeatable,
  );
}

/** The gateway cannot see which tokens were revoked (the registry is out of reach), so it does not accept any: it fails closed. */
export function unconfirmed(): ToolError {
  return new ToolError(
    'unavailable',
    'Dipper cannot confirm this token right now: its list of revoked tokens is out of reach. Retry shortly.',
    { retry_after_ms: OUTAGE_RETRY_MS },
    true,
  );
}

/** The workflow behind the call fails on every attempt (nondeterminism, payload limits): waiting cannot fix it, an operator must. */
export function needsRepair(agentId: string | undefined): ToolError {
  const whose = agentId ? `Agent ${agentId}'s workflow` : "This run's workflow";
  return new ToolError(
    'needs_repair',
    `${whose} fails on every attempt and cannot answer until an operator repairs it (dipper doctor). Retrying will not help.`,
    agentId ? { agent_id: agentId } : {},
    false,
  );
}

export function rateLimited(retryAfterMs: number, from = 'with this token'): ToolError {
  return new ToolError('rate_limited', `Too many requests ${from}. Retry after retry_after_ms.`, { retry_after_ms: retryAfterMs }, true);
}

const STATUS: Record<string, number> = { unavailable: 503, outcome_unknown: 503, rate_limited: 429, needs_repair: 500 };

/** The HTTP status of a service failure, or undefined for a refusal of the call itself (the route picks its status). */
export function serviceStatus(err: ToolError): number | undefined {
  return STATUS[err.code];
}

/** Retry-After is in whole seconds; never 0, which some clients read as "at once, in a loop". */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/** A step of the call (an activity: a disk write, a lookup) failed on every attempt inside the workflow. */
export function stepFailed(): ToolError {
  // The workflow answered: it gave the change up and kept nothing of it.
  return new NothingDone(
    'unavailable',
    'A step of this call failed on every attempt (a disk write or lookup on a Dipper worker). Retry shortly.',
    { retry_after_ms: OUTAGE_RETRY_MS },
    true,
  );
}
