import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SERVER_VERSION } from '../common/version';
import { EXIT } from './execHelp';
import type { Surface, ToolDef } from '../registry/types';
import { findTool, schemaOf, toolHelp, toolList } from './toolCatalog';
import { unreachable } from './unreachable';


export interface ExecOptions {
  /** The agent's bearer token; never printed, and scrubbed from any message that might carry it. */
  token?: string;
  /** The gateway URL; only looked up (in the stack record) when a call is made. */
  url: () => string;
  compact?: boolean;
  inputSchema?: boolean;
  outputSchema?: boolean;
  list?: boolean;
  help?: boolean;
  /** Prints `dipper exec`'s own help. */
  commandHelp: () => void;
}

/**
 * `dipper exec <surface> <tool> -`: one tool call, for people and scripts,
 * through the gateway's MCP endpoint as an MCP client, so it is the same
 * call (auth, validation, review gate, rate limit) a model makes.
 */
export async function exec(surface: string | undefined, tool: string | undefined, input: string | undefined, opts: ExecOptions): Promise<number> {
  const found = surface === undefined ? undefined : findTool(surface, tool);
  if (typeof found === 'string') return usage(found);
  if (found === undefined || opts.list) {
    if (opts.inputSchema || opts.outputSchema) return usage('--input-schema and --output-schema need a tool: dipper exec <surface> <tool> --input-schema');
    if (opts.help && surface === undefined) opts.commandHelp();
    else process.stdout.write(toolList(surface as Surface | undefined));
    return EXIT.ok;
  }
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, opts.compact ? undefined : 2)}\n`);
  if (opts.help) {
    process.stdout.write(toolHelp(found));
    return EXIT.ok;
  }
  if (opts.inputSchema && opts.outputSchema) return usage('give --input-schema or --output-schema, not both');
  if (opts.inputSchema || opts.outputSchema) {
    print(schemaOf(found, opts.inputSchema ? 'input' : 'output'));
    return EXIT.ok;
  }
  if (input !== '-') {
    return usage(`the input comes from stdin: echo '{...}' | dipper exec ${found.surface} ${found.name} -   (its fields: dipper exec ${found.surface} ${found.name} --help)`);
  }
  if (!opts.token) return usage('no agent token: pass --token or set DIPPER_AGENT_TOKEN');
  const args = parseInput(await readStdin());
  if (typeof args === 'string') return usage(args);
  const url = opts.url();
  if (!URL.canParse(url)) return usage(`"${url}" is not a gateway URL (--url or DIPPER_URL)`);
  let result: CallToolResult;
  try {
    result = await callThroughGateway(url, opts.token, found, args);
  } catch (err) {
    process.stderr.write(`dipper: ${scrub(whyNoCall(err, url), opts.token)}\n`);
    return EXIT.noCall;
  }
  print(payloadOf(result));
  return result.isError ? EXIT.toolError : EXIT.ok;
}

function usage(message: string): number {
  process.stderr.write(`dipper exec: ${message}\n`);
  return EXIT.usage;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The arguments object, or why stdin is not one. */
function parseInput(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `stdin is not JSON (${(err as Error).message}); send one JSON object, {} for no arguments`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'stdin must hold one JSON object, {} for no arguments';
  return value as Record<string, unknown>;
}

async function callThroughGateway(url: string, token: string, def: ToolDef, args: Record<string, unknown>): Promise<CallToolResult> {
  const client = new Client({ name: 'dipper-cli', version: SERVER_VERSION });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp/${def.surface}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  try {
    await client.connect(transport);
    // A tool that waits for a person (ask_user) reports progress while it waits; each report keeps the call alive.
    const waiting = def.waits ? { onprogress: () => undefined, resetTimeoutOnProgress: true } : undefined;
    return (await client.callTool({ name: def.name, arguments: args }, undefined, waiting)) as CallToolResult;
  } finally {
    await client.close();
  }
}

/** What the tool answered: its structured result, else its text as JSON; an error is `{"error":{...}}` either way. */
function payloadOf(result: CallToolResult): unknown {
  if (!result.isError && result.structuredContent) return result.structuredContent;
  const text = result.content.find((c) => c.type === 'text')?.text ?? '';
  try {
    return JSON.parse(text);
  } catch {
    return result.isError ? { error: { code: 'unreadable_error', message: text } } : text;
  }
}

/** The gateway's own `{error:{code,message}}` out of the transport's message, when it sent one. */
function gatewayError(err: StreamableHTTPError): string {
  const body = err.message.split('endpoint: ')[1];
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const code = typeof parsed.error?.code === 'string' ? `${parsed.error.code}: ` : '';
    if (typeof parsed.error?.message === 'string') return `${code}${parsed.error.message}`;
  } catch {
    // not JSON: the transport's own words below
  }
  return err.message;
}

/** Why no answer came back: unreachable, refused token, or the gateway turned the request away. */
function whyNoCall(err: unknown, url: string): string {
  if (err instanceof StreamableHTTPError && err.code === 401) {
    return `the gateway refused the agent token (${gatewayError(err)}). Pass the agent's current token with --token or DIPPER_AGENT_TOKEN.`;
  }
  if (err instanceof StreamableHTTPError && err.code !== undefined && err.code > 0) {
    return `the gateway at ${url} answered HTTP ${err.code} (${gatewayError(err)})`;
  }
  if (err instanceof McpError) return `the gateway refused the call: ${err.message}`;
  if (err instanceof TypeError && (err as { cause?: unknown }).cause) return unreachable(url, err);
  return err instanceof Error ? err.message : String(err);
}

/** A token never leaves the process in a message, whatever a library put in one. */
function scrub(message: string, token: string): string {
  return message.split(token).join('<token>');
}
