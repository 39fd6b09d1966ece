import fs from 'node:fs';
import path from 'node:path';
import { toMcpTool } from '../../src/registry/mcpTool';
import { surfaces, tools, toolsOf } from '../../src/registry';
import { SERVED_SURFACES } from '../../src/registry/surfaces';
import { searchAttributeNames } from '../../workflows/searchAttributes';

/** Names the model must never be able to fill in: Dipper injects them from the token. */
const HIDDEN_LIKE = [
  'caller',
  'caller_id',
  'caller_agent_id',
  'agent_run_id',
  'run_id',
  'leader_id',
  'leader',
  'workspace',
  'workspace_path',
  'from',
  'from_agent_id',
  'sender',
];

type JsonSchema = Record<string, any>;

/** Each surface's owner, and the context Dipper injects into its calls (the task board also injects the workspace). */
const OWNER: Record<string, string> = { beidou: 'team-orchestration', agentteam: 'task-board', isphere: 'isphere-messaging' };
const HIDDEN: Record<string, string[]> = {
  beidou: ['caller_agent_id', 'run_id'],
  agentteam: ['workspace_id', 'caller_agent_id', 'run_id'],
  isphere: ['caller_agent_id', 'run_id'],
};

/** Every object schema inside a JSON schema, with its path (properties, items, unions). */
function objectSchemas(schema: JsonSchema, at = '$'): [string, JsonSchema][] {
  const found: [string, JsonSchema][] = [];
  if (schema.type === 'object') found.push([at, schema]);
  for (const [name, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) found.push(...objectSchemas(sub, `${at}.${name}`));
  if (schema.items) found.push(...objectSchemas(schema.items, `${at}[]`));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const [i, sub] of (schema[key] ?? []).entries()) found.push(...objectSchemas(sub, `${at}|${key}${i}`));
  }
  return found;
}

const published = tools.map((def) => [def.name, def, toMcpTool(def)] as const);

describe('published MCP definitions', () => {
  it.each(published)('%s matches its snapshot', (_name, _def, mcp) => {
    expect(mcp).toMatchSnapshot();
  });

  it('lists the tools in registry order (a new or removed tool shows up here in review)', () => {
    expect(tools.map((t) => t.name)).toMatchSnapshot();
  });
});

describe('the registry', () => {
  it('has unique lowercase snake_case names', () => {
    const names = tools.map((t) => t.name);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it('is the beidou, agentteam and isphere surfaces in full, in that order', () => {
    expect([...toolsOf('beidou'), ...toolsOf('agentteam'), ...toolsOf('isphere')]).toEqual(tools);
  });

  it.each(published)('%s has an owner, a surface, a title and a description', (_name, def) => {
    expect(def.owner).toBe(OWNER[def.surface]);
    expect(def.title.trim()).not.toBe('');
    expect(def.description.length).toBeGreaterThan(20);
  });

  it.each(published)('%s has a permission consistent with its flags and annotations', (_name, def, mcp) => {
    expect(def.permission === 'read_only').toBe(def.readOnly);
    expect(def.permission === 'destructive').toBe(def.destructive);
    expect(def.readOnly && def.destructive).toBe(false);
    if (def.readOnly) expect(def.idempotent).toBe(true);
    expect(mcp.annotations).toEqual({
      title: def.title,
      readOnlyHint: def.readOnly,
      destructiveHint: def.destructive,
      idempotentHint: def.idempotent,
      openWorldHint: false,
    });
  });

  it.each(published)('%s takes a strict object: no unknown field gets through, at any depth', (_name, _def, mcp) => {
    expect(mcp.inputSchema.type).toBe('object');
    const objects = objectSchemas(mcp.inputSchema as JsonSchema);
    expect(objects.length).toBeGreaterThan(0);
    for (const [at, schema] of objects) expect([at, schema.additionalProperties]).toEqual([at, false]);
  });

  it.each(published)('%s has no input field named like hidden context', (_name, def, mcp) => {
    const names = objectSchemas(mcp.inputSchema as JsonSchema).flatMap(([, s]) => Object.keys(s.properties ?? {}));
    for (const name of names) {
      expect(HIDDEN_LIKE).not.toContain(name);
      expect(def.hiddenContext as readonly string[]).not.toContain(name);
    }
    expect(def.hiddenContext).toEqual(HIDDEN[def.surface]);
  });

  it.each(published)('%s publishes an object output schema', (_name, _def, mcp) => {
    expect(mcp.outputSchema?.type).toBe('object');
  });

  it('publishes the bare-array result of list_pending_reviews as { items }', () => {
    const def = tools.find((t) => t.name === 'list_pending_reviews')!;
    const out = toMcpTool(def).outputSchema as JsonSchema;
    expect(out).toMatchObject({ type: 'object', required: ['items'], additionalProperties: false });
    expect(Object.keys(out.properties)).toEqual(['items']);
    expect(out.properties.items.type).toBe('array');
    expect(Object.keys(out.properties.items.items.properties).sort()).toEqual(
      ['age_s', 'agent_id', 'name', 'review_pending_ts', 'role', 'summary'].sort(),
    );
  });

  it('marks create_team, and only create_team, deprecated in favour of declare_plan + spawn_agent', () => {
    expect(tools.filter((t) => t.deprecated).map((t) => t.name)).toEqual(['create_team']);
    const def = tools.find((t) => t.name === 'create_team')!;
    expect(def.deprecated?.replacement).toMatch(/declare_plan.*spawn_agent/);
    expect(def.description).toMatch(/^Deprecated/);
    expect(def.title).toMatch(/deprecated/i);
  });

  it('refuses leader_id on create_team with its own code, and the field is not in the schema', () => {
    const def = tools.find((t) => t.name === 'create_team')!;
    expect(def.refusedFields?.leader_id?.code).toBe('leader_override_attempted');
    expect(Object.keys((toMcpTool(def).inputSchema as JsonSchema).properties)).not.toContain('leader_id');
    expect(tools.filter((t) => t.refusedFields).map((t) => t.name)).toEqual(['create_team']);
  });
});

describe('search attributes', () => {
  it('are the same set in the workflow code and in the dev server config', () => {
    const file = path.join(__dirname, '..', '..', 'temporal-config', 'dev-server.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { searchAttributes: Record<string, string> };
    expect([...searchAttributeNames].sort()).toEqual(Object.keys(config.searchAttributes).sort());
    expect(new Set(searchAttributeNames).size).toBe(searchAttributeNames.length);
  });
});

describe('the served surfaces', () => {
  it('are the ones the CLI names without loading the registry, in the same order', () => {
    expect(surfaces()).toEqual([...SERVED_SURFACES]);
  });
});
