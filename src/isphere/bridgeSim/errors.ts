import type { z } from 'zod';

/**
 * Every refusal of the simulator. Code that decides a request's fate throws
 * it knowing nothing of express; the app renders it as the protocol's
 * `{"error": {"code", "message"}}`. Connectors tell failures apart by code.
 */
export class BridgeError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  body(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export function invalidArgument(message: string): BridgeError {
  return new BridgeError(400, 'invalid_argument', message);
}

/** Parses a query or body; the message starts with the field the caller has to fix. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  // A strict object reports an unknown key on itself; the caller needs the key's name.
  const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const field = [...issue.path, ...(unknownKey === undefined ? [] : [unknownKey])].map(String).join('.');
  const what = unknownKey === undefined ? issue.message : 'is not a known field';
  throw invalidArgument(field ? `${field}: ${what}.` : `The request: ${what}.`);
}

/**
 * The body parser's failures are the caller's; anything else unforeseen is
 * ours and says only "internal error", never a stack.
 */
export function asBridgeError(err: unknown, path: string): BridgeError {
  if (err instanceof BridgeError) return err;
  const e = err as { type?: string; status?: number };
  if (e.type === 'entity.parse.failed') return invalidArgument('The body is not valid JSON.');
  if (e.type === 'entity.too.large') {
    // Only a file upload can honestly be this big, so only there is it the documented code.
    const code = path === '/v1/files' ? 'file_too_large' : 'payload_too_large';
    return new BridgeError(413, code, 'The body is larger than the bridge accepts.');
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return invalidArgument('The request body could not be read.');
  return new BridgeError(500, 'internal_error', 'Internal error.');
}
