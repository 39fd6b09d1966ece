/**
 * A failure the caller can act on: a spec error code, a safe message, and the
 * code's extra fields (the offending field, unmet_deps, ...). Thrown anywhere
 * below a tool handler; rendered in one place per surface.
 */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly retryable = false,
  ) {
    super(message);
  }
}

export function invalidInput(field: string, message: string): ToolError {
  return new ToolError('invalid_input', message, { field });
}

/** Anything that is not a ToolError: the caller learns only that it failed, never why inside. */
export function internalError(): ToolError {
  return new ToolError('internal', 'Dipper could not complete this call. It is safe to retry.', {}, true);
}
