import { loadOrCreateSecrets } from '../auth/secrets';
import type { DipperConfig } from '../config';

/** What an MCP client (Claude Code's .mcp.json, say) needs to act as the agent holding this token: its three surfaces. */
export function mcpClientConfig(mcpUrl: string, agentToken: string) {
  const headers = { Authorization: `Bearer ${agentToken}` };
  const at = (surface: string) => ({ type: 'http', url: mcpUrl.replace(/\/mcp\/beidou$/, `/mcp/${surface}`), headers });
  return { mcpServers: { beidou: at('beidou'), agentteam: at('agentteam'), isphere: at('isphere') } };
}

/**
 * Said where the config is printed: a client given it can call the root's
 * tools but hears nothing sent to the root, since MCP clients do not read
 * an agent's inbox.
 */
export const INBOX_NOTE = [
  'With this config an MCP client (Claude Code, the MCP Inspector) calls the root agent\'s tools. It does not hear',
  'the root\'s inbox: messages, review reports, rework, answers to its questions and approval outcomes reach it only',
  'through GET /api/runtime/inbox (docs/runtime-protocol.md). To run agents that hear theirs, use a claude runtime',
  '(DIPPER_RUNTIMES=\'{"default":{"kind":"claude"}}\', README "Claude agents").',
];

/** `dipper start-run`: POST /api/runs as the operator; prints the answer and the root agent's MCP config. */
export async function startRun(config: DipperConfig, task: string): Promise<number> {
  const url = `${config.publicUrl}/api/runs`;
  const { operatorToken } = loadOrCreateSecrets(config);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${operatorToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ task }),
    });
  } catch (err) {
    process.stderr.write(`dipper: could not reach ${url} (${(err as Error).message}); is \`npm start\` running?\n`);
    return 1;
  }
  const text = await res.text();
  const body = parseJson(text);
  process.stdout.write(`${body === undefined ? text : JSON.stringify(body, null, 2)}\n`);
  if (!res.ok) {
    process.stderr.write(`dipper: POST ${url} answered ${res.status}\n`);
    return 1;
  }
  const root = (body as { root?: { agent_token?: unknown; mcp_url?: unknown } } | undefined)?.root;
  if (typeof root?.agent_token !== 'string' || typeof root.mcp_url !== 'string') {
    process.stderr.write('dipper: the answer has no root.agent_token and root.mcp_url, so no MCP client config to print\n');
    return 1;
  }
  process.stdout.write(`\n${INBOX_NOTE.join('\n')}\n\nMCP client config for the root agent:\n`);
  process.stdout.write(`${JSON.stringify(mcpClientConfig(root.mcp_url, root.agent_token), null, 2)}\n`);
  return 0;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
