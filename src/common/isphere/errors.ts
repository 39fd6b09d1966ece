/** The iSphere tools contract's error codes (isphere-tools-contract.md, "Common error codes"). */
export type IsphereCode =
  | 'INVALID_ARGUMENT'
  | 'SOURCE_UNAVAILABLE'
  | 'NOT_LOGGED_IN'
  | 'PERMISSION_DENIED'
  | 'APPROVAL_REQUIRED'
  | 'DRY_RUN_ONLY'
  | 'TARGET_NOT_FOUND'
  | 'AMBIGUOUS_TARGET'
  | 'TIMEOUT'
  | 'CONNECTOR_FAILED'
  | 'INTERNAL_ERROR'
  /** Dipper's addition: the same idempotency key with another send (docs/decisions.md, "iSphere"). */
  | 'IDEMPOTENCY_CONFLICT';

/**
 * A connector's failure in the contract's words. `message` is safe to show
 * (never a token, a URL with credentials, or a stack); `retryable` says
 * whether the same call may succeed later unchanged.
 */
export class ConnectorError extends Error {
  /** The source whose answer this was, when one was reached (src/isphere/connectors/select.ts sets it); for the call's audit. */
  source?: string;

  constructor(
    readonly code: IsphereCode,
    message: string,
    readonly retryable = false,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * A send whose request left and whose answer never came: the bridge may or
 * may not have accepted it. Only a lookup by its client message id can
 * tell; it is never simply sent again.
 */
export class SendOutcomeUnknown extends Error {
  constructor(readonly clientMessageId: string) {
    super('the bridge gave no answer to a send; look it up by its client message id');
  }
}
