/**
 * JSON with object keys sorted at every depth and undefined members left out: equal meaning, equal text.
 * One definition for every process that hashes or compares records: the audit chain (its hashes must
 * verify wherever they are checked), approval bindings, file operation ids, the Task service's
 * idempotency keys and cursors.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
