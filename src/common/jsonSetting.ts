import type { z } from 'zod';

/**
 * A setting given as JSON in an environment variable, checked against its
 * schema: refused at start-up, naming the variable and the field, with the
 * shape it takes (`shape`) when it is not JSON at all.
 */
export function jsonSetting<S extends z.ZodType>(name: string, raw: string, schema: S, shape: string): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error(`${name} must be JSON: ${shape}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${name} ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return parsed.data;
}
