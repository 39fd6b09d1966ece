import { randomUUID } from 'node:crypto';
import { ConnectorError, type IsphereCode } from '../common/isphere/errors';
import type { Fallback, SourceName } from './connectors/types';

/**
 * The `audit` object every iSphere tool answer carries, errors included
 * (isphere-tools-contract.md, "Common audit fields"), plus two fields of
 * Dipper's: `fallbacks`, the sources `auto` moved past, and `replayed`, a
 * repeated send answered from its first outcome.
 */
export interface Audit {
  tool: string;
  request_id: string;
  /** The source that answered; null when none was reached (a refusal before any source). */
  source: SourceName | null;
  /** The person who approved a send; null for reads. */
  operator_id: string | null;
  approval_id: string | null;
  dry_run: boolean;
  target_ref: string | null;
  content_sha256: string | null;
  file_sha256: string | null;
  /** RFC3339, UTC, milliseconds. */
  started_at: string;
  finished_at: string;
  result: 'ok' | 'error';
  fallbacks: Fallback[];
  replayed: boolean;
}

export interface ErrorEnvelope {
  ok: false;
  error: { code: IsphereCode; message: string; retryable: boolean; details?: Record<string, unknown> };
  audit: Audit;
}

/**
 * One call's audit, filled in as the call goes and closed once: the
 * answer's `audit`, and the record a real send keeps.
 */
export class AuditTrail {
  private readonly started: number;
  private readonly fields: Omit<Audit, 'started_at' | 'finished_at' | 'result'>;

  constructor(
    tool: string,
    init: { dryRun: boolean; approvalId?: string | null; operatorId?: string | null; targetRef?: string | null },
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    this.fields = {
      tool,
      request_id: randomUUID(),
      source: null,
      operator_id: init.operatorId ?? null,
      approval_id: init.approvalId ?? null,
      dry_run: init.dryRun,
      target_ref: init.targetRef ?? null,
      content_sha256: null,
      file_sha256: null,
      fallbacks: [],
      replayed: false,
    };
  }

  /** Records what the call learned: the source that answered, the target, hashes. */
  note(more: Partial<Pick<Audit, 'source' | 'fallbacks' | 'target_ref' | 'content_sha256' | 'file_sha256' | 'operator_id' | 'approval_id' | 'replayed'>>): this {
    Object.assign(this.fields, more);
    return this;
  }

  finish(result: 'ok' | 'error'): Audit {
    return { ...this.fields, started_at: new Date(this.started).toISOString(), finished_at: new Date(this.now()).toISOString(), result };
  }

  /** A successful answer: the tool's fields, `ok: true`, and the closed audit. */
  ok<T extends object>(body: T): T & { ok: true; audit: Audit } {
    return { ok: true, ...body, audit: this.finish('ok') };
  }

  /**
   * A refusal in the contract's codes. Anything that is not a ConnectorError
   * is INTERNAL_ERROR with a fixed message: no stack, path or internal id
   * reaches the caller. Fallbacks a connector error carries go to the audit.
   */
  error(err: unknown): ErrorEnvelope {
    if (!(err instanceof ConnectorError)) {
      return { ok: false, error: { code: 'INTERNAL_ERROR', message: 'Dipper failed to handle this call; the failure is logged.', retryable: true }, audit: this.finish('error') };
    }
    const { fallbacks, ...details } = err.details as { fallbacks?: Fallback[] } & Record<string, unknown>;
    if (Array.isArray(fallbacks)) this.note({ fallbacks });
    // A source that was reached and answered with this refusal (a denial checked on its data included).
    if (err.source !== undefined && this.fields.source === null) this.note({ source: err.source as SourceName });
    const error = { code: err.code, message: err.message, retryable: err.retryable, ...(Object.keys(details).length > 0 ? { details } : {}) };
    return { ok: false, error, audit: this.finish('error') };
  }
}
