import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pino from 'pino';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer, mcpSurface } from '../../src/gateway/mcp';
import { toMcpTool } from '../../src/registry/mcpTool';
import { surfaces, tools, toolsOf } from '../../src/registry';
import { applies, contractChecks, listBytes, REGENERATE, renderToolReference, surfaceRules, type ContractCheck } from '../../src/registry/reference';
import { defineTool, type Surface, type ToolContext, type ToolDef } from '../../src/registry/types';
import { withEnvelope } from '../../src/registry/isphere/envelope';

/**
 * The twelve checks of task-tools-contract.md section 12, made concrete for
 * Dipper's registry. Each check lists a tool's problems; every surface runs
 * every check except its exemptions (src/registry/reference.ts), and each
 * check is shown to catch a bad tool, so none passes by being empty.
 */

const root = path.join(__dirname, '..', '..');

type Json = Record<string, any>;
type Check = (def: ToolDef, session: ToolDef[]) => string[];

/** Every subschema with its path: properties, array items and union branches. */
function* walk(s: Json, at = '$'): Generator<[string, Json]> {
  yield [at, s];
  for (const [name, sub] of Object.entries<Json>(s.properties ?? {})) yield* walk(sub, `${at}.${name}`);
  if (s.items) yield* walk(s.items, `${at}[]`);
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const sub of s[key] ?? []) yield* walk(sub, at);
  for (const [name, sub] of Object.entries<Json>(s.$defs ?? {})) yield* walk(sub, `${at}.$defs.${name}`);
}
const fieldsOf = (s: Json) => [...walk(s)].flatMap(([at, o]) => Object.keys(o.properties ?? {}).map((name) => ({ at, name })));
const enumsOf = (s: Json) => [...walk(s)].flatMap(([, o]) => [...(o.enum ?? []), ...(o.const === undefined ? [] : [o.const])]).filter((v): v is string => typeof v === 'string');
const schemas = (def: ToolDef) => {
  const mcp = toMcpTool(def);
  return [mcp.inputSchema, mcp.outputSchema ?? {}] as Json[];
};
const input = (def: ToolDef) => toMcpTool(def).inputSchema as Json;
const output = (def: ToolDef) => (toMcpTool(def).outputSchema ?? {}) as Json;

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
/** Section 3.1's preferred verbs, and the domain verbs its own examples use (task_checkpoint, message_send, review_context_add). */
const VERBS = ['get', 'list', 'search', 'create', 'create_batch', 'update', 'delete', 'set_[a-z][a-z0-9]*', 'checkpoint', 'send', 'add'];
const NAME = new RegExp(`^([a-z][a-z0-9]*)(?:_([a-z][a-z0-9]*))?_(${VERBS.join('|')})$`);
/** Section 5.4's hidden principal and context, by the names a schema would give them. */
const HIDDEN = ['workspace', 'workspace_id', 'workspace_path', 'run_id', 'agent_run_id', 'caller', 'caller_id', 'leader', 'leader_id', 'session_id', 'callback_id', 'from', 'from_agent_id', 'from_run_id', 'sender', 'token', 'authorization'];
const HIDDEN_LIKE = /^caller_|(^|_)token$/;
const PAGE_INPUTS = ['page', 'page_number', 'page_size', 'offset', 'pageToken', 'pageSize'];
const PAGE_OUTPUTS = ['has_more', 'hasMore', 'nextCursor', 'next_page', 'total_pages', 'page'];
const PERMANENT = /permanent|cannot be (restored|undone|recovered)|irreversib/i;

/** What the CLI prints for `dipper exec <surface> <tool> --input-schema`, or why it cannot. */
function cliInputSchema(def: ToolDef): Json | string {
  try {
    const { $schema: _, ...schema } = z.toJSONSchema(def.input) as Json;
    return schema;
  } catch (err) {
    return `no JSON schema: ${(err as Error).message}`;
  }
}

/** Snake words in `text` that start like a tool of the session and are no field or enum value of it: tool names. */
function toolMentions(text: string, session: ToolDef[]): string[] {
  const starts = new Set(session.map((t) => t.name.split('_')[0]));
  const words = new Set(session.flatMap((t) => schemas(t).flatMap((s) => [...fieldsOf(s).map((f) => f.name), ...enumsOf(s)])));
  return [...text.matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)].map((m) => m[0]).filter((w) => starts.has(w.split('_')[0]) && !words.has(w));
}

/** Tools `text` names that a session does not offer: unknown ones, and deprecated ones (contract 11.3 keeps them out of new sessions). */
function referenceProblems(text: string, session: ToolDef[], self?: ToolDef): string[] {
  return [...new Set(toolMentions(text, session))].flatMap((name) => {
    const named = session.find((t) => t.name === name);
    if (!named) return [`names ${name}, which no tool of the session is`];
    if (named.deprecated && named !== self) return [`names ${name}, which is deprecated: name ${named.deprecated.replacement} instead`];
    return [];
  });
}

const checks: Record<ContractCheck, { rule: string; run: Check }> = {
  naming: {
    rule: '1',
    run: (def) => {
      const m = NAME.exec(def.name);
      if (!m) return [`${def.name} is not <domain>_<verb> or <domain>_<resource>_<verb> with a verb of ${VERBS.join(', ')}`];
      return [m[1], m[2]].filter((noun) => noun && /[^su]s$/.test(noun)).map((noun) => `${noun} is plural; resource nouns are singular`);
    },
  },
  snake_case: {
    rule: '2',
    run: (def) =>
      schemas(def).flatMap((s) => [
        ...fieldsOf(s).filter((f) => !SNAKE.test(f.name)).map((f) => `field ${f.at}.${f.name} is not snake_case`),
        ...enumsOf(s).filter((v) => !SNAKE.test(v)).map((v) => `enum value "${v}" is not snake_case`),
      ]),
  },
  no_aliases: {
    rule: '3',
    run: (def) =>
      [...walk(input(def))].flatMap(([at, o]) => {
        const names = Object.keys(o.properties ?? {});
        const plain = (n: string) => n.toLowerCase().replace(/_/g, '');
        return [
          ...names.filter((n, i) => names.findIndex((m) => plain(m) === plain(n)) !== i).map((n) => `${at}.${n} is a twin of another field`),
          ...names.filter((n) => o.properties[n].deprecated === true || /^\s*(deprecated|alias)\b/i.test(o.properties[n].description ?? '')).map((n) => `${at}.${n} is a deprecated alias`),
        ];
      }),
  },
  mcp_cli_agree: {
    rule: '4',
    run: (def) => {
      const mcp = input(def);
      const cli = cliInputSchema(def);
      if (typeof cli === 'string') return [`the CLI has ${cli}`];
      if (isDeepStrictEqual(mcp, cli)) return [];
      const keys = [...new Set([...Object.keys(mcp.properties ?? {}), ...Object.keys(cli.properties ?? {})])];
      return [
        ...(isDeepStrictEqual(mcp.required ?? [], cli.required ?? []) ? [] : [`required: MCP ${JSON.stringify(mcp.required ?? [])}, CLI ${JSON.stringify(cli.required ?? [])}`]),
        ...keys.filter((k) => !isDeepStrictEqual(mcp.properties?.[k], cli.properties?.[k])).map((k) => `${k}: MCP and CLI schemas differ`),
        'the MCP and CLI input schemas differ',
      ];
    },
  },
  annotations: {
    rule: '5',
    run: (def) => {
      const a = toMcpTool(def).annotations ?? {};
      const want = { read_only: [true, false], agent_mutation: [false, false], destructive: [false, true] }[def.permission];
      const problems: string[] = [];
      if (def.readOnly !== want[0] || def.destructive !== want[1]) problems.push(`${def.permission} needs readOnly ${want[0]}, destructive ${want[1]}`);
      if (a.readOnlyHint !== want[0] || a.destructiveHint !== want[1]) problems.push(`${def.permission} needs readOnlyHint ${want[0]}, destructiveHint ${want[1]}`);
      if (a.idempotentHint !== def.idempotent) problems.push('idempotentHint differs from idempotent');
      if (def.idempotency && def.idempotent !== ['read', 'desired_state'].includes(def.idempotency)) problems.push(`idempotent ${def.idempotent} with idempotency ${def.idempotency}`);
      return problems;
    },
  },
  destructive_wording: {
    rule: '5',
    run: (def) => (def.permission === 'destructive' && !PERMANENT.test(def.description) ? ['a destructive tool must say it is permanent or cannot be restored'] : []),
  },
  hidden_context: {
    rule: '6',
    run: (def) =>
      fieldsOf(input(def))
        .filter((f) => HIDDEN.includes(f.name) || HIDDEN_LIKE.test(f.name) || (def.hiddenContext as readonly string[]).includes(f.name))
        .map((f) => `${f.at}.${f.name} is hidden context`),
  },
  pagination: {
    rule: '7',
    run: (def) => {
      const inProps = input(def).properties ?? {};
      const out = output(def);
      const problems = [
        ...fieldsOf(input(def)).filter((f) => PAGE_INPUTS.includes(f.name)).map((f) => `input ${f.name}: pages go by limit and cursor`),
        ...fieldsOf(out).filter((f) => PAGE_OUTPUTS.includes(f.name)).map((f) => `output ${f.name}: the next page is next_cursor`),
      ];
      const paged = /_(list|search)$/.test(def.name) || 'cursor' in inProps || 'next_cursor' in (out.properties ?? {});
      if (!paged) return problems;
      if (inProps.limit?.type !== 'integer' || inProps.cursor?.type !== 'string') problems.push('input needs limit (integer) and cursor (string)');
      if (out.properties?.items?.type !== 'array' || out.properties?.next_cursor?.type !== 'string') problems.push('output needs items (array) and next_cursor (string)');
      if ((out.required ?? []).includes('next_cursor')) problems.push('next_cursor is omitted on the last page, so not required');
      return problems;
    },
  },
  idempotency: {
    rule: '8',
    run: (def) => {
      const has = (field: string) => field in (input(def).properties ?? {});
      const problems: string[] = [];
      if (!def.idempotency || !def.concurrency) return ['idempotency and concurrency must be declared'];
      if (def.readOnly !== (def.idempotency === 'read')) problems.push(`idempotency ${def.idempotency} on a ${def.permission} tool`);
      if (def.readOnly && def.concurrency !== 'none') problems.push('a read has no concurrency control');
      if ((def.idempotency === 'idempotency_key') !== has('idempotency_key')) problems.push('idempotency_key: the metadata and the input disagree');
      if ((def.concurrency === 'expected_updated_at') !== has('expected_updated_at')) problems.push('expected_updated_at: the metadata and the input disagree');
      return problems;
    },
  },
  ownership: {
    rule: '9',
    run: (def, session) => [
      ...(typeof def.owner === 'string' && def.owner.trim() ? [] : ['no owner']),
      ...(typeof def.surface === 'string' && def.surface.trim() ? [] : ['no surface']),
      ...(session.filter((t) => t.name === def.name).length > 1 ? [`another tool of the session is also ${def.name}`] : []),
    ],
  },
  references: {
    rule: '10',
    run: (def, session) => {
      const texts = [def.description, ...schemas(def).flatMap((s) => [...walk(s)].map(([, o]) => o.description ?? ''))];
      return referenceProblems(texts.join('\n'), session, def);
    },
  },
  result_budget: {
    rule: '11',
    run: (def) => (def.resultBudget === 'standard' ? [] : ["resultBudget must be 'standard'"]),
  },
  migration: {
    rule: '12',
    run: (def, session) => {
      if (!def.deprecated) return [];
      const named = def.deprecated.replacement.match(/[a-z][a-z0-9_]*/g) ?? [];
      return [
        ...(named.length ? [] : ['the replacement names no tool']),
        ...named.filter((n) => !session.some((t) => t.name === n && !t.deprecated)).map((n) => `replacement ${n} is not a current tool of the session`),
        ...named.filter((n) => !def.description.includes(n)).map((n) => `the description does not point to ${n}`),
        ...(def.deprecated.callable?.trim() ? [] : ['deprecated.callable must say how it stays callable']),
        ...(def.deprecated.removalGate?.trim() ? [] : ['deprecated.removalGate must say when it can go']),
        ...((toMcpTool(def)._meta as Json | undefined)?.deprecated === true ? [] : ['tools/list must mark it deprecated']),
      ];
    },
  },
  deprecated_unlisted: {
    rule: '12',
    // Every registered tool is listed (section 9.3), so a deprecated one would reach new sessions.
    run: (def) => (def.deprecated ? ['a deprecated tool must leave the registry: every registered tool is listed'] : []),
  },
};

describe.each(surfaces())('the %s surface', (surface) => {
  const cases = toolsOf(surface).flatMap((def) =>
    contractChecks.filter((c) => applies(c, surface)).map((c) => [checks[c].rule, c, def.name, def] as const),
  );
  it.each(cases)('12.%s %s: %s', (_rule, check, _name, def) => {
    expect(checks[check].run(def, tools)).toEqual([]);
  });
});

/** A tool that passes every check; each bad case below changes one thing. */
const good = defineTool({
  name: 'note_get',
  surface: 'agentteam',
  owner: 'task-board',
  title: 'Get a note',
  description: 'Read one note by its number.',
  permission: 'read_only',
  readOnly: true,
  destructive: false,
  idempotent: true,
  hiddenContext: ['workspace_id'],
  idempotency: 'read',
  concurrency: 'none',
  resultBudget: 'standard',
  input: z.strictObject({ number: z.number().int().describe('The note number.') }),
  output: z.object({ title: z.string() }),
  handler: async () => ({ title: '' }),
}) as unknown as ToolDef;
const mutation = { permission: 'agent_mutation', readOnly: false, idempotent: false, idempotency: 'none', concurrency: 'none' } as const;
const destructive = { ...mutation, permission: 'destructive', destructive: true } as const;
const bad = (over: Partial<ToolDef>) => ({ ...good, ...over }) as ToolDef;
const page = z.strictObject({ limit: z.number().int().optional(), cursor: z.string().optional() });

describe('every check catches a bad tool', () => {
  it('passes the good tool on every check', () => {
    for (const check of contractChecks) expect([check, checks[check].run(good, [...tools, good])]).toEqual([check, []]);
  });

  it.each<[ContractCheck, string, Partial<ToolDef>]>([
    ['naming', 'verb first', { name: 'get_note' }],
    ['naming', 'a verb off the list', { name: 'note_fetch' }],
    ['naming', 'a plural resource', { name: 'notes_get' }],
    ['snake_case', 'a camelCase field', { input: z.strictObject({ noteRef: z.string() }) }],
    ['snake_case', 'a camelCase enum value', { input: z.strictObject({ view: z.enum(['inProgress']) }) }],
    ['no_aliases', 'a camelCase twin', { input: z.strictObject({ note_ref: z.string(), noteRef: z.string() }) }],
    ['no_aliases', 'a field marked deprecated', { input: z.strictObject({ number: z.number(), num: z.number().meta({ deprecated: true }) }) }],
    ['mcp_cli_agree', 'a default: optional to MCP, required to the CLI', { input: z.strictObject({ limit: z.number().default(20) }) }],
    ['mcp_cli_agree', 'a type the CLI cannot print', { input: z.strictObject({ at: z.date() }) }],
    ['annotations', 'a destructive tool without destructiveHint', { ...destructive, destructive: false }],
    ['annotations', 'a read that is not readOnly', { readOnly: false }],
    ['annotations', 'a desired-state setter not idempotent', { ...mutation, idempotency: 'desired_state' }],
    ['destructive_wording', 'a delete that does not say it is permanent', { ...destructive, description: 'Delete a note.' }],
    ['hidden_context', 'workspace_id as input', { input: z.strictObject({ workspace_id: z.string() }) }],
    ['hidden_context', 'the caller, nested', { input: z.strictObject({ by: z.strictObject({ caller_agent_id: z.string() }) }) }],
    ['pagination', 'page numbers and has_more', { name: 'note_list', input: z.strictObject({ page: z.number().int() }), output: z.object({ items: z.array(z.string()), has_more: z.boolean() }) }],
    ['pagination', 'a list without a cursor', { name: 'note_list', input: z.strictObject({ limit: z.number().int() }), output: z.object({ items: z.array(z.string()) }) }],
    ['pagination', 'next_cursor required', { name: 'note_list', input: page, output: z.object({ items: z.array(z.string()), next_cursor: z.string() }) }],
    ['idempotency', 'a mutation without idempotency', { ...mutation, idempotency: undefined }],
    ['idempotency', 'idempotency_key declared, not accepted', { ...mutation, idempotency: 'idempotency_key' }],
    ['idempotency', 'expected_updated_at accepted, not declared', { ...mutation, input: z.strictObject({ expected_updated_at: z.string() }) }],
    ['ownership', 'no owner', { owner: '' as ToolDef['owner'] }],
    ['ownership', 'a name another tool has', { name: 'task_get' }],
    ['references', 'a tool that does not exist', { description: 'Read one note; note_search finds its number.' }],
    ['references', 'a deprecated tool', { description: 'Read one note of a team from create_team.' }],
    ['result_budget', 'no result budget', { resultBudget: undefined }],
    ['migration', 'a replacement that does not exist', { deprecated: { replacement: 'note_find', callable: 'Listed.', removalGate: 'Never.' }, description: 'Deprecated: use note_find.' }],
    ['migration', 'no word on how it stays callable', { deprecated: { replacement: 'task_get' }, description: 'Deprecated: use task_get.' }],
    ['deprecated_unlisted', 'a deprecated tool in the registry', { deprecated: { replacement: 'task_get', callable: 'Listed.', removalGate: 'When unused.' } }],
  ])('%s catches %s', (check, _why, over) => {
    const def = bad(over);
    expect(checks[check].run(def, [...tools, def])).not.toEqual([]);
  });
});

/** Compact-JSON bytes of each surface's tools/list, about 12% above their size when set (beidou 18,336; agentteam 23,509; isphere 34,691). */
const LIST_BUDGET: Partial<Record<Surface, number>> = { beidou: 20_500, agentteam: 26_500, isphere: 38_900 };

describe('12.11 the tool list of each surface stays within its byte budget (section 10.1)', () => {
  it.each(surfaces().map((s) => [s, listBytes(toolsOf(s)), LIST_BUDGET[s]] as const))('%s: %d bytes, budget %s', (_s, bytes, budget) => {
    expect(budget).toBeDefined();
    expect(bytes).toBeLessThanOrEqual(budget!);
  });

  it('catches a list that grew past its budget', () => {
    const grown = [...toolsOf('agentteam'), bad({ description: 'x'.repeat(4000) })];
    expect(listBytes(grown)).toBeGreaterThan(LIST_BUDGET.agentteam!);
  });
});

/**
 * Each surface's contract as data, test/contract/<surface>.json, transcribed
 * by hand from the spec the surface follows (its `source` names the spec's
 * file and sections). The specs are documents kept beside the repository;
 * the tests read only these files, so a clone checks the same contract, and
 * none of it is derived from the registry under test.
 */
interface SpecFields {
  required: string[];
  optional: string[];
}
interface SpecTool extends SpecFields {
  /** The fields of each item of list x, from the spec's `Each x[i]` table. */
  each?: Record<string, SpecFields>;
  /** isphere: the "Output JSON" example, as the spec shows it. */
  output?: Json;
  /** isphere: the codes of the tool's "Errors:" line. */
  errors?: string[];
}
interface Contract {
  source: string;
  /** false where the spec names only some of each tool's fields (task-tools-contract.md 13.2 says "including"). */
  lists_every_field?: boolean;
  /** isphere: the keys of "Common audit fields". */
  audit?: string[];
  /** Optional fields Dipper adds where the spec is silent, per tool, each with why. */
  added_by_dipper?: Record<string, Record<string, string>>;
  tools: Record<string, SpecTool>;
}

const contractOf = (surface: Surface): Contract => JSON.parse(fs.readFileSync(path.join(root, 'test', 'contract', `${surface}.json`), 'utf8')) as Contract;
const specTool = (contract: Contract, name: string) => (Object.hasOwn(contract.tools, name) ? contract.tools[name] : undefined);

describe.each<Surface>(['beidou', 'agentteam', 'isphere'])('test/contract/%s.json', (surface) => {
  it('names its source and lists each field of a tool once', () => {
    const contract = contractOf(surface);
    expect(contract.source).toMatch(/\.md\b/);
    const twice = Object.entries(contract.tools).flatMap(([name, t]) =>
      [t, ...Object.values(t.each ?? {})].flatMap((f) => [...f.required, ...f.optional].filter((x, i, all) => all.indexOf(x) !== i).map((x) => `${name}.${x}`)),
    );
    expect(twice).toEqual([]);
  });
});

/** Where the registry and a contract differ: tools either way, a field's requiredness, and fields the spec does not have (where it lists them all). */
function specProblems(contract: Contract, defs: ToolDef[]): string[] {
  const names = defs.map((d) => d.name);
  const problems = [
    ...names.filter((n) => !specTool(contract, n)).map((n) => `${n} is not in the spec`),
    ...Object.keys(contract.tools).filter((n) => !names.includes(n)).map((n) => `${n} of the spec is not registered`),
  ];
  for (const def of defs) {
    const tool = specTool(contract, def.name);
    if (!tool) continue;
    for (const [list, spec] of [['', tool] as const, ...Object.entries(tool.each ?? {})]) {
      const schema = list ? input(def).properties?.[list]?.items : input(def);
      const ours = new Map(Object.keys(schema?.properties ?? {}).map((k) => [k, (schema.required ?? []).includes(k)]));
      const fields = new Map([...spec.required.map((f) => [f, true] as const), ...spec.optional.map((f) => [f, false] as const)]);
      const where = list ? `${def.name} ${list}[i]` : def.name;
      for (const [f, required] of fields) if (ours.get(f) !== required) problems.push(`${where}.${f}: spec ${required ? 'required' : 'optional'}, registry ${ours.has(f) ? (ours.get(f) ? 'required' : 'optional') : 'absent'}`);
      const added = list ? {} : (contract.added_by_dipper?.[def.name] ?? {});
      for (const f of Object.keys(added)) if (ours.get(f) !== false) problems.push(`${where}.${f}: added by Dipper as optional, registry ${ours.has(f) ? 'required' : 'absent'}`);
      if (contract.lists_every_field !== false) for (const f of ours.keys()) if (!fields.has(f) && !Object.hasOwn(added, f)) problems.push(`${where}.${f} is not in the spec`);
    }
  }
  return problems;
}

describe.each(surfaces().filter((s) => surfaceRules[s]).map((s) => [s, surfaceRules[s]!] as const))('the %s surface, where exempt, follows its own spec', (surface, rules) => {
  it.each(Object.entries(rules.exempt))('states why %s is exempt', (_check, why) => {
    expect(why.length).toBeGreaterThan(20);
  });

  it(`has exactly the tools, fields and required fields of ${rules.spec} (test/contract/${surface}.json)`, () => {
    const contract = contractOf(surface);
    expect(Object.keys(contract.tools).length).toBeGreaterThan(0);
    expect(specProblems(contract, toolsOf(surface))).toEqual([]);
  });

  it('catches a tool the spec does not have, a field it does not have, and a required field made optional', () => {
    const contract = contractOf(surface);
    const [first, ...rest] = toolsOf(surface);
    const required = input(first).required as string[];
    const changed = { ...first, input: first.input.partial().extend({ extra_field: z.string() }) } as ToolDef;
    expect(specProblems(contract, [changed, ...rest, bad({ name: 'send_messages' })])).toEqual([
      'send_messages is not in the spec',
      ...required.map((f) => `${first.name}.${f}: spec required, registry optional`),
      `${first.name}.extra_field is not in the spec`,
    ]);
    expect(required.length).toBeGreaterThan(0);
  });
});

describe('the agentteam surface has the tools of task-tools-contract.md section 13, and the fields it names', () => {
  // Sections 2-12 hold agentteam to every check above; section 13 names its tools and some of their fields.
  const contract = contractOf('agentteam');

  it('has the seven tools, and each named field, required where section 13.2 says', () => {
    expect(Object.keys(contract.tools)).toHaveLength(7);
    expect(specProblems(contract, toolsOf('agentteam'))).toEqual([]);
  });

  it('catches a tool missing, a named field missing and a required one made optional, and lets unnamed fields be', () => {
    const [first, ...rest] = toolsOf('agentteam');
    const changed = { ...first, input: first.input.partial().omit({ query: true }).extend({ extra_field: z.string() }) } as ToolDef;
    expect(specProblems(contract, [changed, ...rest.slice(0, -1)])).toEqual([
      `${rest.at(-1)!.name} of the spec is not registered`,
      `${first.name}.channel: spec required, registry optional`,
      `${first.name}.query: spec optional, registry absent`,
    ]);
  });
});

/** Output keys and codes Dipper adds to the isphere spec, each recorded in docs/decisions.md ("iSphere"). */
const ADDED_OUTPUT: Record<string, string[]> = {
  '': ['truncated'],
  isphere_receive_messages: ['plan'],
  isphere_send_message: ['approval'],
  isphere_send_file: ['approval'],
};
const ADDED_AUDIT = ['fallbacks', 'replayed'];
const ADDED_ERRORS: Record<string, string[]> = {
  isphere_receive_messages: ['AMBIGUOUS_TARGET'],
  isphere_send_message: ['SOURCE_UNAVAILABLE', 'IDEMPOTENCY_CONFLICT'],
  isphere_send_file: ['SOURCE_UNAVAILABLE', 'IDEMPOTENCY_CONFLICT'],
};

/** Keys of a spec's example answer against a JSON schema, nested objects and the first item of arrays too. */
function keyProblems(example: Json, schema: Json, where: string, added: string[] = []): string[] {
  const props = schema.properties ?? {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries<unknown>(example)) {
    if (!(key in props)) {
      problems.push(`${where}.${key} is missing`);
      continue;
    }
    const sub = props[key];
    if (Array.isArray(value) && value[0] && typeof value[0] === 'object') problems.push(...keyProblems(value[0] as Json, sub.items ?? {}, `${where}.${key}[]`));
    else if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) problems.push(...keyProblems(value as Json, sub, `${where}.${key}`));
  }
  for (const key of Object.keys(props)) if (!(key in example) && !added.includes(key)) problems.push(`${where}.${key} is not in the spec`);
  return problems;
}

/** The `ok: true` branch of an isphere output schema, and its audit object ($ref resolved). */
function successOf(def: ToolDef): { ok: Json; audit: Json } {
  const schema = output(def);
  const ok = (schema.oneOf ?? schema.anyOf ?? []).find((b: Json) => b.properties?.ok?.const === true) ?? {};
  const ref = ok.properties?.audit?.$ref as string | undefined;
  return { ok, audit: ref ? schema.$defs?.[ref.split('/').pop()!] ?? {} : ok.properties?.audit ?? {} };
}

function isphereProblems(contract: Contract, def: ToolDef): string[] {
  const tool = specTool(contract, def.name);
  const example = tool?.output;
  if (!example) return [`${def.name} is not in the spec`];
  const { ok, audit } = successOf(def);
  const codes = [...(tool.errors ?? []), ...(ADDED_ERRORS[def.name] ?? [])];
  const ours = [...(def.errorCodes ?? [])];
  return [
    ...keyProblems(example, ok, def.name, [...ADDED_OUTPUT[''], ...(ADDED_OUTPUT[def.name] ?? [])]),
    ...keyProblems(Object.fromEntries((contract.audit ?? []).map((k) => [k, null])), audit, `${def.name}.audit`, ADDED_AUDIT),
    ...codes.filter((c) => !ours.includes(c)).map((c) => `${def.name} does not answer ${c}`),
    ...ours.filter((c) => !codes.includes(c)).map((c) => `${def.name} answers ${c}, which its spec does not list`),
  ];
}

describe('the isphere surface answers as its spec shows', () => {
  const contract = contractOf('isphere');

  it('holds six tools, the audit fields and each tool\'s output example and error codes', () => {
    expect(Object.values(contract.tools).filter((t) => t.output && t.errors)).toHaveLength(6);
    expect(contract.audit).toContain('request_id');
    expect(contract.tools.isphere_send_file.errors).toContain('APPROVAL_REQUIRED');
  });

  it.each(toolsOf('isphere').map((d) => [d.name, d] as const))('%s: output keys, audit fields and error codes', (_name, def) => {
    expect(isphereProblems(contract, def)).toEqual([]);
  });

  it('catches a missing output key, an added one, a missing audit field and an unlisted code', () => {
    const [first] = toolsOf('isphere');
    const changed = {
      ...first,
      output: withEnvelope({ next_cursor: z.string().nullable(), extra: z.string() }),
      errorCodes: [...first.errorCodes!.filter((c) => c !== 'TIMEOUT'), 'APPROVAL_REQUIRED'],
    } as ToolDef;
    expect(isphereProblems(contract, changed)).toEqual([
      `${first.name}.contacts is missing`,
      `${first.name}.extra is not in the spec`,
      `${first.name} does not answer TIMEOUT`,
      `${first.name} answers APPROVAL_REQUIRED, which its spec does not list`,
    ]);
  });
});

describe('12.9 exposure: every registered tool is in its surface\'s tools/list (section 9.3)', () => {
  it.each(surfaces())('%s', async (surface) => {
    const server = createMcpServer(mcpSurface(surface, toolsOf(surface)), {} as ToolContext, pino({ level: 'silent' }));
    const client = new Client({ name: 'contract-test', version: '1' });
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(theirs), client.connect(ours)]);
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual(toolsOf(surface).map((t) => t.name));
    } finally {
      await client.close();
      await server.close();
    }
  });
});

/** Skills name tools as mcp__<surface>__<tool>, or bare. */
function skillProblems(text: string): string[] {
  const qualified = [...text.matchAll(/mcp__([a-z0-9]+)__([a-z0-9_]+)/g)]
    .filter(([, surface, name]) => !toolsOf(surface as Surface).some((t) => t.name === name && !t.deprecated))
    .map(([whole]) => `${whole} is not a current tool of that surface`);
  return [...qualified, ...referenceProblems(text, tools)];
}

describe('12.10 skills name only tools of the session', () => {
  const files = fs.readdirSync(path.join(root, 'skills'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('SKILL.md'));

  it.each(files)('skills/%s', (file) => {
    expect(skillProblems(fs.readFileSync(path.join(root, 'skills', file), 'utf8'))).toEqual([]);
  });

  it('catches a skill naming a tool that is not there, or deprecated', () => {
    expect(skillProblems('Call `mcp__beidou__send_messages`, then `mcp__agentteam__task_get`.')).toHaveLength(1);
    expect(skillProblems('Start with `mcp__beidou__create_team`.')).toHaveLength(1);
    expect(skillProblems('Then call list_tasks.')).toHaveLength(1);
  });
});

describe('docs/tools.md', () => {
  it('is the reference rendered from the registry', () => {
    const onDisk = fs.readFileSync(path.join(root, 'docs', 'tools.md'), 'utf8');
    expect(onDisk === renderToolReference() ? 'up to date' : `docs/tools.md is stale; regenerate it with: ${REGENERATE}`).toBe('up to date');
  });
});
