/** A JSON schema as zod publishes it; only the keywords a reader needs are looked at. */
export interface JsonSchema {
  type?: string | string[];
  format?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

/** One short type phrase: `string`, `integer`, `todo|done`, `array of string`, `string or null`. */
export function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('|');
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(' or ');
  if (schema.type === 'array') return schema.items ? `array of ${typeOf(schema.items)}` : 'array';
  if (schema.type === 'object') return 'object';
  if (schema.type === undefined) return 'any';
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  return schema.format ? `${schema.type} (${schema.format})` : schema.type;
}

/** The object schema inside a field, if any: its own, an array's items', or a union member's. */
function innerObject(schema: JsonSchema): JsonSchema | undefined {
  if (schema.properties) return schema;
  if (schema.items) return innerObject(schema.items);
  for (const member of schema.anyOf ?? schema.oneOf ?? []) {
    const found = innerObject(member);
    if (found) return found;
  }
  return undefined;
}

/**
 * The fields of an object schema as readable lines, nested ones under their
 * parent (`tasks[].id`, `filters.assignee`), so a person can write the input
 * without reading JSON schema.
 */
export function fieldLines(schema: JsonSchema, indent = '  ', prefix = ''): string[] {
  const lines: string[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    lines.push(`${indent}${path} (${typeOf(field)}${required.has(name) ? ', required' : ''})`);
    if (field.description) lines.push(`${indent}    ${field.description}`);
    const inner = innerObject(field);
    if (inner) lines.push(...fieldLines(inner, `${indent}  `, field.type === 'array' ? `${path}[].` : `${path}.`));
  }
  return lines;
}
