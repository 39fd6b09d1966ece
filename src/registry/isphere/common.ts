import { z } from 'zod';
import { ConnectorError, type IsphereCode } from '../../common/isphere/errors';
import { AuditTrail } from '../../isphere/audit';
import type { SourceName, SourcePreference } from '../../isphere/connectors';
import { readCursor, writeCursor, type Filled, type Position } from '../../isphere/paging';
import type { Reader } from '../../isphere/policy';
import { itemsThatFit } from '../budget';
import type { IsphereService } from '../../isphere/service';
import { defineTool, type ToolContext, type ToolDef } from '../types';
import { ToolError } from '../../common/toolErrors';
import { asConnectorError, EnvelopeError } from './envelope';
import { unavailable } from '../../common/serviceErrors';
import { failureOf } from '../../temporal';

/** Agent and run come from the caller's token: the run scopes cursors, the agent's skill its access. */
const HIDDEN = ['caller_agent_id', 'run_id'] as const;

const FLAGS = {
  read_only: { readOnly: true, destructive: false },
  agent_mutation: { readOnly: false, destructive: false },
  destructive: { readOnly: false, destructive: true },
} as const;

type Fixed = 'surface' | 'owner' | 'hiddenContext' | 'readOnly' | 'destructive' | 'idempotent' | 'resultBudget';

/** An isphere tool: its owner, hidden context, result budget, and flags from its permission class. */
export function isphereTool<In extends z.ZodObject, Out>(
  def: Omit<ToolDef<In, Out>, Fixed> & Required<Pick<ToolDef, 'idempotency' | 'concurrency' | 'errorCodes'>>,
): ToolDef<In, Out> {
  const flags = { ...FLAGS[def.permission], idempotent: def.idempotency === 'read' || def.idempotency === 'desired_state' };
  return defineTool({ ...def, surface: 'isphere', owner: 'isphere-messaging', hiddenContext: HIDDEN, resultBudget: 'standard', ...flags });
}

export const READ_ERRORS = ['INVALID_ARGUMENT', 'SOURCE_UNAVAILABLE', 'NOT_LOGGED_IN', 'PERMISSION_DENIED', 'TIMEOUT', 'CONNECTOR_FAILED', 'INTERNAL_ERROR'] as const satisfies readonly IsphereCode[];

export const readSource = z
  .enum(['bridge', 'local_readonly', 'uia', 'network', 'auto'])
  .describe('Where to read: auto (default) tries bridge, then local_readonly, then network and uia, and reports every source it passed over in audit.fallbacks.');

export const limitOf = (fallback: number, max: number) => z.number().int().min(1).max(max).describe(`Items per page, 1-${max} (default ${fallback}).`);
export const cursor = z.string().min(1).max(2000).describe('next_cursor of the previous page of this same query.');

/** Text the model sends: trimmed of nothing, bounded in characters. */
export const text = (max: number, what: string) => z.string().min(1).max(max).describe(what);

export interface Call {
  service: IsphereService;
  trail: AuditTrail;
  /** The caller's run and skill, for the access policy (looked up once per agent). */
  reader: () => Promise<Reader>;
}

/**
 * Runs one isphere call: an audit trail from the start, the answer with
 * `ok: true` and the closed audit, or any failure as the error envelope
 * (anything unexpected as INTERNAL_ERROR, its text kept out).
 */
export async function answer<T extends object>(
  tool: string,
  ctx: ToolContext,
  dryRun: boolean,
  body: (call: Call) => Promise<T>,
): Promise<T & { ok: true; audit: ReturnType<AuditTrail['finish']> }> {
  const trail = new AuditTrail(tool, { dryRun });
  try {
    const service = ctx.isphere;
    // Served only where the gateway wired the isphere sources; a context without them is a wiring fault, not the caller's.
    if (!service) throw new Error('isphere tools served without an IsphereService');
    let reader: Promise<Reader> | undefined;
    return trail.ok(await body({ service, trail, reader: () => (reader ??= service.reader(ctx.caller)) }));
  } catch (err) {
    if (err instanceof ConnectorError) throw new EnvelopeError(trail.error(err));
    if (err instanceof ToolError) throw new EnvelopeError(trail.error(asConnectorError(err)));
    // A Temporal call that got no answer in time is `unavailable` here as on every other surface, not a failure nobody expected.
    if (failureOf(err).kind === 'no_answer') throw new EnvelopeError(trail.error(asConnectorError(unavailable())));
    throw new EnvelopeError(trail.error(err), err);
  }
}

/** Refuses a read the policy does not grant, without saying whether the object exists. */
export function denied(what: string): ConnectorError {
  return new ConnectorError('PERMISSION_DENIED', `The access policy does not let this agent read ${what}.`, false, { reason: 'access_policy' });
}

/** An agent the policy grants nothing is refused outright, before any source is asked. */
export async function mustReadSomething(call: Call): Promise<Reader> {
  const who = await call.reader();
  if (!call.service.policy.readsAnything(who)) throw denied('anything in iSphere');
  return who;
}

export const truncation = z
  .object({
    reason: z.literal('result_budget'),
    budget_bytes: z.number().int(),
    items_omitted: z.number().int().describe('Items of this page left for the next call.'),
    fields_cut: z.array(z.string()).describe('Texts shortened in place, each ending in a "[cut: N more characters]" marker.'),
    continue_with: z.string(),
  })
  .describe('Present when the answer was shortened to fit the result budget; nothing is dropped silently.');

/** A text longer than this is cut in a list answer, so one long message cannot crowd out the page. */
export const MAX_LISTED_TEXT = 4000;

/** Cuts a text to `max` characters with a marker saying how much is left out. */
export function cutText(text: string, max = MAX_LISTED_TEXT): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join('')} … [cut: ${chars.length - max} more characters]`;
}

/**
 * One page of a list answer within the result budget: items that do not
 * fit are left for the next call (at least one is shown), and the cursor
 * continues right after the last one shown.
 */
export function pageWithin<T>(
  filled: Filled<T>,
  at: { source: SourceName; digest: string; budget: number; tool: string },
  /** The texts cut in place among the first `shown` items (their paths). */
  cutAmong: (shown: number) => string[] = () => [],
): { items: T[]; next_cursor: string | null; truncated?: z.infer<typeof truncation> } {
  const fit = itemsThatFit(filled.items, { next_cursor: 'x'.repeat(300), audit: 'x'.repeat(900) }, at.budget);
  const shown = fit < filled.items.length ? Math.max(1, fit) : filled.items.length;
  const next = shown < filled.items.length ? filled.after[shown - 1] : filled.next;
  const nextCursor = next ? writeCursor(at.source, next, at.digest) : null;
  const fieldsCut = cutAmong(shown);
  if (shown === filled.items.length && fieldsCut.length === 0) return { items: filled.items, next_cursor: nextCursor };
  return {
    items: filled.items.slice(0, shown),
    next_cursor: nextCursor,
    truncated: {
      reason: 'result_budget',
      budget_bytes: at.budget,
      items_omitted: filled.items.length - shown,
      fields_cut: fieldsCut,
      continue_with:
        shown < filled.items.length
          ? `Call ${at.tool} again with next_cursor (same query) for the rest.`
          : `Texts over ${MAX_LISTED_TEXT} characters are cut; this tool does not return the rest of them.`,
    },
  };
}

/** The cursor's source when continuing a list (a list never moves to another source), or the caller's preference. */
export function sourceFor(
  preference: string | undefined,
  rawCursor: string | undefined,
  digest: string,
): { preference: SourcePreference; start: Position | undefined } {
  if (rawCursor === undefined) return { preference: (preference ?? 'auto') as SourcePreference, start: undefined };
  const c = readCursor(rawCursor, digest);
  if (preference !== undefined && preference !== 'auto' && preference !== c.s) {
    throw new ConnectorError('INVALID_ARGUMENT', `This cursor continues a list read from ${c.s}; leave source_preference out or set it to ${c.s}.`, false, { field: 'cursor' });
  }
  return { preference: c.s as SourcePreference, start: { u: c.u, k: c.k, n: c.n } };
}
