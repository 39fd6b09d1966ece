import { z } from 'zod';
import { ConnectorError, type IsphereCode } from '../../common/isphere/errors';
import { AuditTrail, type ErrorEnvelope } from '../../isphere/audit';
import { ToolError } from '../../common/toolErrors';

/**
 * The isphere surface's answers: `ok: true` with the tool's fields, or the
 * error envelope Dipper chose where the spec has none (docs/decisions.md,
 * "iSphere"): `{ok: false, error: {code, message, retryable, details?},
 * audit}`. Both carry the spec's `audit` object. An error travels as the
 * tool result's structured content too, so each published output schema
 * is the union of the two, told apart by `ok`.
 */

export const CODES = [
  'INVALID_ARGUMENT',
  'SOURCE_UNAVAILABLE',
  'NOT_LOGGED_IN',
  'PERMISSION_DENIED',
  'APPROVAL_REQUIRED',
  'DRY_RUN_ONLY',
  'TARGET_NOT_FOUND',
  'AMBIGUOUS_TARGET',
  'TIMEOUT',
  'CONNECTOR_FAILED',
  'INTERNAL_ERROR',
  'IDEMPOTENCY_CONFLICT',
] as const satisfies readonly IsphereCode[];

export const SOURCES = ['bridge', 'local_readonly', 'uia', 'network', 'mock'] as const;
export const source = z.enum(SOURCES).describe('The source that answered.');
const sha = z.string().nullable();
const nullable = z.string().nullable();

/** The spec's audit fields, plus fallbacks and replayed; what each means is in docs/isphere.md, kept out of every tools/list. */
export const audit = z
  .object({
    tool: z.string(),
    request_id: z.string(),
    source: z.enum(SOURCES).nullable(),
    operator_id: nullable,
    approval_id: nullable,
    dry_run: z.boolean(),
    target_ref: nullable,
    content_sha256: sha,
    file_sha256: sha,
    started_at: z.string(),
    finished_at: z.string(),
    result: z.enum(['ok', 'error']),
    fallbacks: z.array(z.object({ source: z.enum(SOURCES), code: z.enum(CODES) })),
    replayed: z.boolean(),
  })
  .meta({ id: 'audit', description: 'What this call did (every answer, errors too): fallbacks are the sources auto passed over; replayed, a repeat answered from its first outcome.' });

const failure = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(CODES),
    message: z.string(),
    retryable: z.boolean().describe('Whether the same call may succeed later unchanged.'),
    details: z.record(z.string(), z.unknown()).optional().describe('Facts to act on: field, candidates, reason, retry_after_ms.'),
  }),
  audit,
});

/** A tool's output: its success fields with `ok: true` and `audit`, or the error envelope. */
export function withEnvelope<S extends z.ZodRawShape>(shape: S) {
  return z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), ...shape, audit }), failure]);
}

/** An answered refusal: the envelope, closed, on its way to the MCP result (src/gateway/mcp.ts renders it). */
export class EnvelopeError extends ToolError {
  constructor(
    readonly envelope: ErrorEnvelope,
    /** A failure nobody expected, answered as INTERNAL_ERROR: logged by the gateway, never shown. */
    readonly unexpected?: unknown,
  ) {
    super(envelope.error.code, envelope.error.message, {}, envelope.error.retryable);
  }
}

/**
 * A refusal Dipper made before the tool ran (input, review gate, rate,
 * deadline), in the isphere codes, with an audit of the call: the caller
 * sees one envelope whatever refused it.
 */
export function envelopeOf(err: ToolError, tool: string, dryRun: boolean): ErrorEnvelope {
  if (err instanceof EnvelopeError) return err.envelope;
  const trail = new AuditTrail(tool, { dryRun });
  return trail.error(asConnectorError(err));
}

/** Dipper's own refusal codes in the isphere contract's. */
export function asConnectorError(err: ToolError): ConnectorError {
  const extra = err.extra;
  switch (err.code) {
    case 'invalid_input':
      return new ConnectorError('INVALID_ARGUMENT', err.message, false, { field: extra.field, ...(extra.field_errors ? { field_errors: extra.field_errors } : {}) });
    case 'review_gate_denied':
      return new ConnectorError('PERMISSION_DENIED', err.message, false, { reason: 'review_gate_denied', ...extra });
    case 'rate_limited':
      return new ConnectorError('TIMEOUT', err.message, true, { reason: 'rate_limited', retry_after_ms: extra.retry_after_ms });
    case 'unavailable':
      return new ConnectorError('INTERNAL_ERROR', err.message, true, { reason: 'unavailable', ...(extra.retry_after_ms ? { retry_after_ms: extra.retry_after_ms } : {}) });
    default:
      return new ConnectorError('INTERNAL_ERROR', 'Dipper could not complete this call. It is safe to retry.', true);
  }
}
