import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { toMcpTool } from './mcpTool';
import { surfaces, toolsOf } from './index';
import { typeOf, type JsonSchema } from './schemaFields';
import type { Surface, ToolDef } from './types';

/**
 * The checks of task-tools-contract.md section 12, as test/registry/contract.test.ts
 * names them. Named here so an exemption can only name a check that exists.
 */
export const contractChecks = [
  'naming',
  'snake_case',
  'no_aliases',
  'mcp_cli_agree',
  'annotations',
  'destructive_wording',
  'hidden_context',
  'pagination',
  'idempotency',
  'ownership',
  'references',
  'result_budget',
  'migration',
  'deprecated_unlisted',
] as const;
export type ContractCheck = (typeof contractChecks)[number];

export interface SurfaceRules {
  /**
   * The spec the surface follows instead: a document kept beside the
   * repository (shared/specs/), named here, never read by code. Its contract
   * data, transcribed by hand, is in the repository: test/contract/<surface>.json.
   */
  spec: string;
  /** Decisions that win over the spec where they differ, beside it. */
  notes?: string;
  /** The checks that do not apply, each with why. */
  exempt: Partial<Record<ContractCheck, string>>;
}

/**
 * The one per-surface exemption the reference notes ask for ("not tool by
 * tool"). A surface not listed here follows sections 2-12 of
 * task-tools-contract.md in full. Where names and fields are exempt, the
 * contract test holds them to the surface's own spec instead.
 */
export const surfaceRules: Partial<Record<Surface, SurfaceRules>> = {
  beidou: {
    spec: 'team-tool-surface.md',
    notes: 'team-reference-notes.md',
    exempt: {
      naming: 'Its names are the spec\'s, verb first (send_message, list_peers), not `<domain>_<verb>`.',
      snake_case: 'Its fields are the spec\'s, camelCase multiSelect of ask_user included.',
      destructive_wording:
        "Section 7.4 is about permanent deletion; beidou deletes nothing, and its destructive tool (terminate_child) is the spec's approve verdict, described in the spec's terms.",
      result_budget: 'The spec bounds results by their schemas and content limits; it has no byte budget class.',
      deprecated_unlisted: 'The spec keeps create_team listed until all callers migrate.',
    },
  },
  isphere: {
    spec: 'isphere-tools-contract.md',
    exempt: {
      naming: 'Its names are the spec\'s, `isphere_<verb>_<resource>` with plural resources (isphere_search_contacts).',
      snake_case: "Its error codes are the spec's UPPER_SNAKE values (INVALID_ARGUMENT); its field names are the spec's own, checked against the spec.",
      pagination:
        "Its lists are named for what they hold (contacts, groups, messages, files), and next_cursor is always present, null on the last page, as the spec's output JSON shows.",
    },
  },
};

/** Whether `check` applies to `surface`. */
export function applies(check: ContractCheck, surface: Surface): boolean {
  return surfaceRules[surface]?.exempt[check] === undefined;
}


/** The compact-JSON size of a surface's tools/list: the model carries it in every turn (contract 10.1). */
export function listBytes(defs: ToolDef[]): number {
  return Buffer.byteLength(JSON.stringify(defs.map(toMcpTool)), 'utf8');
}


interface Row {
  field: string;
  type: string;
  required: boolean;
  description: string;
}

/** One row per field, nested ones as `parent.child` and `list[].child`. */
function rows(schema: JsonSchema, prefix = ''): Row[] {
  const out: Row[] = [];
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    const field = prefix + name;
    out.push({ field, type: typeOf(sub), required: (schema.required ?? []).includes(name), description: String(sub.description ?? '') });
    const inner = sub.type === 'array' ? sub.items : sub;
    if (inner?.properties) out.push(...rows(inner, `${field}${sub.type === 'array' ? '[]' : ''}.`));
  }
  return out;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function fieldTable(schema: Tool['inputSchema']): string[] {
  const all = rows(schema as JsonSchema);
  if (all.length === 0) return ['No fields.'];
  const line = (r: Row) => `| \`${r.field}\` | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`;
  return ['| Field | Type | Required | Description |', '|---|---|---|---|', ...all.map(line)];
}

function toolSection(def: ToolDef): string[] {
  const mcp = toMcpTool(def);
  const a = mcp.annotations ?? {};
  const old = def.deprecated;
  const deprecation = old ? [`yes: use ${old.replacement}.`, old.callable, `Removal gate: ${old.removalGate ?? 'not decided'}`].filter(Boolean).join(' ') : 'no';
  return [
    `### \`${def.name}\`: ${def.title}`,
    '',
    def.description,
    '',
    '| | |',
    '|---|---|',
    `| Owner | ${def.owner} |`,
    `| Permission | ${def.permission} (readOnlyHint ${a.readOnlyHint}, destructiveHint ${a.destructiveHint}, idempotentHint ${a.idempotentHint}) |`,
    `| Idempotency | ${def.idempotency ?? 'not declared'} |`,
    `| Concurrency | ${def.concurrency ?? 'not declared'} |`,
    `| Result budget | ${def.resultBudget ?? 'schema limits only'} |`,
    `| Hidden context | ${def.hiddenContext.join(', ') || 'none'} |`,
    `| Deprecated | ${cell(deprecation)} |`,
    `| CLI | \`dipper exec ${def.surface} ${def.name} -\` |`,
    '',
    '**Input**',
    '',
    ...fieldTable(mcp.inputSchema),
    '',
    '**Output**',
    '',
    ...outputTables(mcp.outputSchema ?? { type: 'object' }),
    '',
  ];
}

/** `{$ref: "#/$defs/x"}` replaced by the definition, so a reader sees the fields where they are used. */
function inlined(schema: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema {
  const ref = (schema as { $ref?: string }).$ref;
  if (ref) return inlined(defs[ref.split('/').pop()!] ?? {}, defs);
  const out: Record<string, unknown> = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, inlined(v, defs)]));
  if (schema.items) out.items = inlined(schema.items, defs);
  for (const key of ['anyOf', 'oneOf'] as const) if (schema[key]) out[key] = schema[key]!.map((m) => inlined(m, defs));
  return out as JsonSchema;
}

/** One table, or one per branch of an answer that is a union told apart by `ok` (the isphere surface). */
function outputTables(schema: Tool['outputSchema'] & object): string[] {
  const whole = inlined(schema as JsonSchema, ((schema as { $defs?: Record<string, JsonSchema> }).$defs ?? {}));
  const branches = whole.oneOf ?? whole.anyOf;
  if (!branches || whole.properties) return fieldTable(whole as Tool['inputSchema']);
  return branches.flatMap((b) => [`When \`ok\` is ${JSON.stringify(b.properties?.ok?.const)}:`, '', ...fieldTable(b as Tool['inputSchema']), '']).slice(0, -1);
}

function surfaceSection(surface: Surface): string[] {
  const defs = toolsOf(surface);
  const rules = surfaceRules[surface];
  const contract = rules
    ? [
        `Follows task-tools-contract.md sections 2-12 except the checks below, where its own spec, \`${rules.spec}\`${rules.notes ? ` with \`${rules.notes}\`` : ''}, holds instead:`,
        '',
        ...Object.entries(rules.exempt).map(([check, why]) => `- ${check}: ${why}`),
      ]
    : ['Follows task-tools-contract.md sections 2-12 in full.'];
  return [`## ${surface}`, '', ...contract, '', `${defs.length} tools; tools/list is ${listBytes(defs)} bytes of compact JSON.`, '', ...defs.flatMap(toolSection)];
}

/** How docs/tools.md is written; the contract test says it when the file is stale. */
export const REGENERATE = `npx tsx -e "require('fs').writeFileSync('docs/tools.md', require('./src/registry/reference').renderToolReference())"`;

/** docs/tools.md: every registered tool, per surface, from the registry alone (no dates, so it only changes with the registry). */
export function renderToolReference(): string {
  const lines = [
    '<!-- Generated from the registry by src/registry/reference.ts; do not edit by hand. Regenerate with:',
    `     ${REGENERATE} -->`,
    '',
    '# Tools',
    '',
    'Every tool of the registry (src/registry/index.ts), per MCP surface (`/mcp/<surface>`), as tools/list publishes it; the bench surface\'s no-op is left out. test/registry/contract.test.ts checks them against task-tools-contract.md section 12.',
    '',
    ...surfaces().map((s) => `- **${s}**: ${toolsOf(s).map((d) => `\`${d.name}\``).join(', ')}`),
    '',
    ...surfaces().flatMap(surfaceSection),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}
