import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ToolDef } from './types';

// Derived from the registry entry alone, so it lives with it: the gateway serves it, the CLI and docs/tools.md print it.

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const js = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete js.$schema;
  if (js.type === 'array') {
    return { type: 'object', properties: { items: js }, required: ['items'], additionalProperties: false };
  }
  // A union of objects (an isphere answer: ok or the error envelope); MCP wants `type: object` at the root.
  if (js.type === undefined && (js.oneOf || js.anyOf)) return { type: 'object', ...js } as Tool['inputSchema'];
  return js as Tool['inputSchema'];
}

/** The MCP definition of a registry entry: the only place annotations are derived. */
export function toMcpTool(def: ToolDef): Tool {
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: jsonSchema(def.input, 'input'),
    outputSchema: jsonSchema(def.output, 'output') as Tool['outputSchema'],
    ...(def.deprecated ? { _meta: { deprecated: true, replacement: def.deprecated.replacement } } : {}),
    annotations: {
      title: def.title,
      readOnlyHint: def.readOnly,
      destructiveHint: def.destructive,
      idempotentHint: def.idempotent,
      openWorldHint: false,
    },
  };
}
