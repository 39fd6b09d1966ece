import { toMcpTool } from '../registry/mcpTool';
import { surfaces, tools, toolsOf } from '../registry';
import type { Surface, ToolDef } from '../registry/types';
import { fieldLines, type JsonSchema } from '../registry/schemaFields';

/**
 * What `dipper exec` knows without the network: the registry's surfaces and
 * tools, shown through toMcpTool so the CLI and MCP never describe a tool
 * differently.
 */

export { surfaces };

/**
 * The tool, or a message naming the valid choices. A tool is named by its
 * surface and name (`agentteam task_list`), or, for a name of the form
 * `<domain>_<action>`, by section 3.3's route (`task list`).
 */
export function findTool(surface: string, name: string | undefined): ToolDef | string | undefined {
  const known = surfaces();
  if (!known.includes(surface as Surface)) {
    const byRoute = name === undefined ? undefined : tools.find((t) => t.name === `${surface}_${name}`);
    if (byRoute) return byRoute;
    return `unknown surface "${surface}"; the surfaces are: ${known.join(', ')} (or name a tool by its route, as in: task list)`;
  }
  if (name === undefined) return undefined;
  const def = toolsOf(surface as Surface).find((t) => t.name === name);
  if (def) return def;
  return `unknown tool "${name}" on ${surface}; its tools are: ${toolsOf(surface as Surface).map((t) => t.name).join(', ')}`;
}

/** A description's first sentence: enough for a list line. */
function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

export function toolList(only?: Surface): string {
  const lines: string[] = [];
  for (const surface of only ? [only] : surfaces()) {
    const defs = toolsOf(surface);
    const width = Math.max(...defs.map((d) => d.name.length));
    lines.push(`${surface} (/mcp/${surface}):`);
    for (const def of defs) lines.push(`  ${def.name.padEnd(width)}  ${firstSentence(def.description)}`);
    lines.push('');
  }
  lines.push('Details of one tool: dipper exec <surface> <tool> --help');
  return `${lines.join('\n')}\n`;
}

export function schemaOf(def: ToolDef, which: 'input' | 'output'): unknown {
  const mcp = toMcpTool(def);
  return which === 'input' ? mcp.inputSchema : mcp.outputSchema;
}

export function toolHelp(def: ToolDef): string {
  const mcp = toMcpTool(def);
  const call = `dipper exec ${def.surface} ${def.name}`;
  const annotations = Object.entries(mcp.annotations ?? {})
    .filter(([key]) => key !== 'title')
    .map(([key, value]) => `${key}: ${String(value)}`);
  const fields = fieldLines(mcp.inputSchema as JsonSchema);
  return [
    `${def.name} (${def.surface}): ${mcp.title}`,
    '',
    mcp.description,
    ...(def.deprecated ? ['', `Deprecated: use ${def.deprecated.replacement}.`] : []),
    '',
    `Annotations: ${annotations.join(', ')}`,
    '',
    'Input, one JSON object on stdin:',
    ...(fields.length ? fields : ['  (no fields: send {})']),
    '',
    'Usage:',
    `  echo '{...}' | ${call} -`,
    '      call it as the agent of --token or DIPPER_AGENT_TOKEN (exit codes: dipper exec --help)',
    ...(/^[a-z]+_[a-z_]+$/.test(def.name) && def.surface === 'agentteam' ? [`  or: echo '{...}' | dipper exec ${def.name.replace('_', ' ')} -   (section 3.3's <domain> <action>)`] : []),
    `  ${call} --input-schema | --output-schema`,
    "      the input's or the result's JSON schema, as MCP publishes it",
    '',
  ].join('\n');
}
