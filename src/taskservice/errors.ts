import type { z } from 'zod';

export interface ErrorBody {
  error: { code: string; message: string; field?: string; details?: Record<string, unknown> };
}

/**
 * The one failure of the Task service. The store throws it knowing nothing of
 * HTTP; the route layer renders it with its status. A client tells failures
 * apart by `code` alone, so codes are part of the contract (docs/task-service.md).
 */
export class TaskServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: { field?: string; details?: Record<string, unknown> } = {},
  ) {
    super(message);
  }

  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

export function invalidInput(field: string | undefined, message: string): TaskServiceError {
  return new TaskServiceError(400, 'invalid_input', message, field ? { field } : {});
}

/** Parses a body or query; the first issue names the field (`tasks[1].title`) a caller has to fix. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [...issue.path];
  // A strict object reports unknown keys on the object itself; the caller needs the key's own name.
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) path.push(issue.keys[0]);
  const field = fieldName(path);
  const what = issue.code === 'unrecognized_keys' ? 'is not a known field' : issue.message;
  throw invalidInput(field || undefined, field ? `${field}: ${what}.` : `The request: ${what}.`);
}

export function fieldName(path: PropertyKey[]): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)), '');
}
