import { invalidInput, type ToolError } from '../common/toolErrors';

/** An unpaired UTF-16 surrogate: not a character, and what encodeURIComponent and many stores refuse deep inside a call. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Deeper than any tool's schema nests; a deeper value is refused by the schema anyway. */
const MAX_DEPTH = 16;

/**
 * What no tool's schema should have to consider, refused before any schema
 * runs and named by its field: a `__proto__` key (JSON.parse makes it an own
 * property; the MCP SDK's parsing then copies it onto the prototype, out of a
 * strict schema's sight) and a string that is not valid Unicode.
 */
export function malformedInput(args: Record<string, unknown>): ToolError | undefined {
  return walk(args, '', 0);
}

function walk(value: unknown, at: string, depth: number): ToolError | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? invalidInput(at || 'arguments', `${at || 'arguments'}: not valid Unicode text (a lone surrogate).`) : undefined;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = walk(value[i], `${at}[${i}]`, depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const field = at ? `${at}.${key}` : key;
    if (key === '__proto__') return invalidInput(field, `Unknown field "${field}".`);
    if (LONE_SURROGATE.test(key)) return invalidInput(at || 'arguments', `${at || 'arguments'}: a field name is not valid Unicode text.`);
    const bad = walk((value as Record<string, unknown>)[key], field, depth + 1);
    if (bad) return bad;
  }
  return undefined;
}

/** Why `arguments` of a tools/call is not an object of fields, or undefined when it is one (or absent). */
export function argumentsShape(args: unknown): string | undefined {
  if (args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args))) return undefined;
  return `arguments must be an object of the tool's fields, not ${args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`}.`;
}
