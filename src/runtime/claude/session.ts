import crypto from 'node:crypto';
import path from 'node:path';
import type { Options, SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { LaunchPayload } from '../../common/launchPayload';
import { runtimeRequest } from '../retry';
import { FORBIDDEN, forbiddenHook, reviewGateHook } from './forbidden';
import { InboxFeeder } from './inbox';
import { Input } from './input';
import { appendix, sessionIdFor, type ClaudeSettings } from './settings';
import { CONTINUE_AFTER_CRASH, cutMidTurn, stableUuid } from './turns';

const log = (line: string): void => {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
};

/** Tool calls may wait on people (ask_user climbs to a person): the CLI's MCP calls wait as long as the agent lives. */
const MCP_CALL_MS = String(7 * 24 * 3600 * 1000);

/**
 * Runs one agent as a Claude Agent SDK session until its terminate item:
 * Dipper's three surfaces as its MCP servers, its skill as the system
 * prompt's appendix, its first message and then its inbox as user turns.
 * Returns the exit code: 0 after a clean end, 1 when the session broke
 * (a crash, which Dipper answers by launching it again).
 */
export async function runSession(payload: LaunchPayload, settings: ClaudeSettings, home: string): Promise<number> {
  const { query, getSessionMessages } = await import('@anthropic-ai/claude-agent-sdk');
  const configDir = path.join(home, '.claude');
  // The transcript is read here too (getSessionMessages), from the same folder the CLI writes.
  process.env.CLAUDE_CONFIG_DIR = configDir;
  const sessionId = sessionIdFor(payload, home, () => crypto.randomUUID());
  const transcript = await getSessionMessages(sessionId).catch(() => []);
  const stored = new Set(transcript.map((m) => String((m as { uuid?: string }).uuid)));
  const resume = stored.size > 0;
  log(`session ${resume ? 'resumed' : 'started'} (launch mode ${payload.mode})`);

  const input = new Input();
  const firstUuid = stableUuid(payload.agent_id, sessionId, 'first');
  if (!stored.has(firstUuid)) input.push(firstUuid, payload.first_message);
  // A crash mid-turn left a turn the resumed session would never finish: it is told to carry on (once per transcript state).
  if (resume && cutMidTurn(transcript)) {
    log('the last turn was cut short: the session is told to carry on');
    input.push(stableUuid(payload.agent_id, sessionId, `carry-on-${stored.size}`), CONTINUE_AFTER_CRASH);
  }

  // Set by the terminate item: the session is closed first, so its transcript is whole, and the item acknowledged after.
  let ending: { seq: number | null } | null = null;
  const abort = new AbortController();
  const feeder = new InboxFeeder(payload, input, sessionId, stored, async (item) => {
    ending = { seq: item?.seq ?? null };
    input.close();
    await session.interrupt().catch(() => undefined);
  }, log);

  const session = query({ prompt: input, options: options(payload, settings, home, configDir, sessionId, resume, abort) });
  const feeding = feeder.run().catch((err: unknown) => {
    // The inbox is gone for good (the token was revoked, or the gateway refused): nothing more can reach this agent.
    log(`inbox: ${err instanceof Error ? err.message : String(err)}`);
    if (!ending) abort.abort();
  });
  try {
    for await (const message of session) note(message, feeder);
  } catch (err) {
    if (!ending) {
      log(`session failed: ${err instanceof Error ? err.message : String(err)}`);
      return 1;
    }
  }
  const end = ending as { seq: number | null } | null;
  if (!end) {
    log('the session ended without a terminate item');
    return 1;
  }
  await feeding;
  await feeder.settled();
  // Acknowledging the terminate item ends the agent: Dipper stops the process after it.
  if (end.seq !== null) await feeder.ack(end.seq).catch((err: unknown) => log(`acknowledging the terminate item failed: ${String(err)}`));
  log('session closed after the terminate item');
  return 0;
}

function note(message: SDKMessage, feeder: InboxFeeder): void {
  if (message.type === 'user' && 'isReplay' in message && message.isReplay) feeder.stored(message.uuid);
  if (message.type === 'result') log(`turn ended: ${message.subtype}, ${message.num_turns} model turns`);
}

function options(payload: LaunchPayload, settings: ClaudeSettings, home: string, configDir: string, sessionId: string, resume: boolean, abort: AbortController): Options {
  const bearer = { Authorization: `Bearer ${payload.token}` };
  return {
    abortController: abort,
    cwd: payload.workspace_path,
    model: payload.model ?? settings.model,
    systemPrompt: { type: 'preset', preset: 'claude_code', append: appendix(payload) },
    mcpServers: {
      beidou: { type: 'http', url: payload.mcp_url, headers: bearer },
      agentteam: { type: 'http', url: payload.task_mcp_url, headers: bearer },
      isphere: { type: 'http', url: payload.isphere_mcp_url, headers: bearer },
      ...settings.mcpServers,
    },
    strictMcpConfig: true,
    // Nothing from the host's or the workspace's Claude settings: the operator's runtime configuration is the whole of it.
    settingSources: [],
    // Layer 1 of the forbidden tools: the model never sees them (`offered` turns it off, to test layer 2 alone).
    disallowedTools: process.env.DIPPER_CLAUDE_SHADOW_TOOLS === 'offered' ? [] : Object.keys(FORBIDDEN),
    allowedTools: ['mcp__beidou', 'mcp__agentteam', 'mcp__isphere', ...Object.keys(settings.mcpServers).map((s) => `mcp__${s}`), ...settings.allowedTools],
    // Anything not allowed above is refused, never asked: nobody is at this agent's terminal.
    permissionMode: 'dontAsk',
    hooks: {
      PreToolUse: [
        { matcher: Object.keys(FORBIDDEN).join('|'), hooks: [forbiddenHook((event, tool) => report(payload, event, tool), log)] },
        { hooks: [reviewGateHook((tool) => reviewGate(payload, tool), log)] },
      ],
    },
    ...(resume ? { resume: sessionId } : { sessionId }),
    extraArgs: { 'replay-user-messages': null },
    // The runtime's own environment (built from nothing by the worker, with the operator's `env` and `pass_env`), and the CLI's settings.
    env: {
      ...process.env,
      DIPPER_CLAUDE: undefined,
      HOME: home,
      CLAUDE_CONFIG_DIR: configDir,
      // The agent's credential at Dipper's model proxy is its own token; the real key stays with Dipper.
      ANTHROPIC_BASE_URL: settings.modelUrl,
      ANTHROPIC_API_KEY: payload.token,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // Dipper's tools are offered as they are, not behind a search.
      ENABLE_TOOL_SEARCH: 'false',
      // An operator may set a shorter one in the runtime's env; a repeated ask_user then waits for the same answer.
      MCP_TOOL_TIMEOUT: process.env.MCP_TOOL_TIMEOUT ?? MCP_CALL_MS,
      MCP_TIMEOUT: '60000',
    },
    stderr: (data) => process.stderr.write(data),
  };
}

/** The gateway's word on a tool Dipper does not serve: its review-gate refusal, or null. */
async function reviewGate(payload: LaunchPayload, tool: string): Promise<string | null> {
  const answer = await runtimeRequest<{ allowed: boolean; message?: string }>(payload.token, 'POST', payload.inbox_url.replace(/\/inbox$/, '/review-gate'), { tool }, 3);
  return answer.allowed ? null : (answer.message ?? `${tool} waits until you answer your children's pending reviews.`);
}

/** Records an event only the runtime sees at the gateway (a few tries: a denial must not wait long on it). */
async function report(payload: LaunchPayload, type: string, tool: string): Promise<void> {
  await runtimeRequest(payload.token, 'POST', payload.inbox_url.replace(/\/inbox$/, '/events'), { type, tool }, 3);
}
