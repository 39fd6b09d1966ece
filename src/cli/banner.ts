import { taskApiUrl, type DipperConfig } from '../config';
import { surfaces } from '../registry';
import type { Surface } from '../registry/types';

/** What a surface's endpoint line calls it, where not its own name: the task board's surface is agentteam. */
const LABEL: Partial<Record<Surface, string>> = { agentteam: 'tasks' };

/**
 * What `npm start` prints once the stack is up: one MCP endpoint per served
 * surface (from the registry, so a new surface is listed without a change
 * here), then the other addresses, aligned in one column.
 */
export function bannerLines(config: DipperConfig, operatorToken: string, temporalUi: string): string[] {
  const api = `${config.publicUrl}/api`;
  const rows: [string, string][] = [
    ...surfaces().map((s): [string, string] => [`MCP endpoint (${LABEL[s] ?? s}):`, `${config.publicUrl}/mcp/${s}`]),
    ['Task API:', `${taskApiUrl(config)}${config.taskApi.url ? '' : ' (embedded)'}`],
    ['Operator API:', api],
    ['Operator console:', `${config.publicUrl}/console (sign in with the operator token)`],
    ['Temporal UI:', temporalUi],
    ['Operator token:', operatorToken],
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  return [
    '',
    'Dipper is up.',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}${value}`),
    '',
    'Start a run:',
    '  npm run dipper -- start-run --task "Describe the work"',
    'or:',
    `  curl -X POST ${api}/runs -H "Authorization: Bearer ${operatorToken}" \\`,
    `    -H 'Content-Type: application/json' -d '{"task": "Describe the work"}'`,
    'Inspect it:',
    '  npm run dipper -- status',
    '  npm run dipper -- temporal workflow list',
    '',
    'Ctrl-C stops everything.',
    '',
  ];
}
