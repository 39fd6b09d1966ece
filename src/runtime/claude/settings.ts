import fs from 'node:fs';
import path from 'node:path';
import type { LaunchPayload } from '../../common/launchPayload';
import { FORBIDDEN } from './forbidden';

/**
 * What the worker tells a Claude runtime besides its launch payload, in
 * its environment: where the model proxy is, and the operator's choices
 * for the runtime (`DIPPER_CLAUDE`, JSON).
 */
export interface ClaudeSettings {
  /** The model proxy's base URL; the agent's own token is its credential there. */
  modelUrl: string;
  /** The model when the spawn named none. */
  model?: string;
  /** Built-in tools the agent may use besides Dipper's three surfaces. */
  allowedTools: string[];
  /** More MCP servers the operator gives every agent of the runtime. */
  mcpServers: Record<string, { type: 'http'; url: string; headers?: Record<string, string> }>;
}

/** The built-in tools a Claude agent may use unless its runtime says otherwise: files and a shell in its workspace. */
export const DEFAULT_TOOLS = ['Read', 'Write', 'Edit', 'Glob', 'Grep', 'Bash'];

export function settingsFrom(env: NodeJS.ProcessEnv): ClaudeSettings {
  const raw = (env.DIPPER_CLAUDE ? JSON.parse(env.DIPPER_CLAUDE) : {}) as Partial<ClaudeSettings>;
  if (!env.DIPPER_MODEL_URL) throw new Error('DIPPER_MODEL_URL is not set: the worker sets it for every claude runtime');
  return {
    modelUrl: env.DIPPER_MODEL_URL,
    model: raw.model,
    allowedTools: (raw.allowedTools ?? DEFAULT_TOOLS).filter((t) => !(t in FORBIDDEN)),
    mcpServers: raw.mcpServers ?? {},
  };
}

/** The line that tells a model (and the scripted model) which agent it is. */
export function agentLine(payload: LaunchPayload): string {
  return `You are the agent "${payload.name.replace(/"/g, "'")}" (skill ${payload.skill}) of a Dipper team.`;
}

/** The system prompt's appendix: who the agent is, its skill body, its team's rules. */
export function appendix(payload: LaunchPayload): string {
  const rules = payload.rules.length > 0 ? `\n\n[TEAM RULES]\n${payload.rules.map((r) => `- ${r}`).join('\n')}\n[/TEAM RULES]` : '';
  return `${agentLine(payload)}\n\n${payload.skill_body}${rules}`;
}

/**
 * The id of the session this launch continues or starts. It is kept in the
 * agent's home, which outlives its process: any launch but `fresh` (the
 * second crash) goes on with the agent's current session, whose transcript
 * then says what it already holds.
 */
export function sessionIdFor(payload: LaunchPayload, home: string, newId: () => string): string {
  const file = path.join(home, '.dipper-session');
  let current: string | null = null;
  try {
    current = fs.readFileSync(file, 'utf8').trim() || null;
  } catch {
    current = null;
  }
  if (current && payload.mode !== 'fresh') return current;
  const id = newId();
  fs.writeFileSync(file, id, { mode: 0o600 });
  return id;
}
