import { expiryOf, mintAgentToken } from '../../src/auth/tokens';
import type { AgentIdentity, LaunchSpec } from '../../workflows/types';

/** Everything a runtime needs to run one agent. The same shape goes to every adapter. */
export interface LaunchPayload {
  run_id: string;
  agent_id: string;
  name: string;
  role: string;
  skill: string;
  model: string | null;
  token: string;
  mcp_url: string;
  inbox_url: string;
  skill_body: string;
  first_message: string;
  rules: string[];
  workspace_path: string;
  artifacts_path: string | null;
  /** 'first' on spawn; after a crash 'resume' (same session) then 'fresh'. */
  mode: 'first' | 'resume' | 'fresh';
}

export interface PayloadDeps {
  publicUrl: string;
  tokenSecret: string;
  tokenTtlSeconds: number;
}

/** A launch spec whose stored texts have been read back (ContentStore.resolve). */
export type ReadLaunch = { [K in keyof LaunchSpec]: K extends 'rules' ? string[] : string };

export function buildPayload(
  deps: PayloadDeps,
  id: AgentIdentity,
  launch: ReadLaunch,
  skillBody: string,
  mode: LaunchPayload['mode'],
  /** The launch the token belongs to: its generation and when it was made. */
  launched: { gen: number; issuedAt: number },
): LaunchPayload {
  return {
    run_id: id.runId,
    agent_id: id.agentId,
    name: id.name,
    role: id.role,
    skill: id.skill,
    model: id.model ?? null,
    token: mintAgentToken(deps.tokenSecret, {
      run_id: id.runId,
      agent_id: id.agentId,
      gen: launched.gen,
      exp: expiryOf(launched.issuedAt, deps.tokenTtlSeconds),
    }),
    mcp_url: `${deps.publicUrl}/mcp/beidou`,
    inbox_url: `${deps.publicUrl}/api/runtime/inbox`,
    skill_body: skillBody.split('{role_description}').join(launch.roleDescription),
    first_message: launch.firstMessage,
    rules: launch.rules,
    workspace_path: id.workspacePath,
    artifacts_path: id.artifactsPath ?? null,
    mode,
  };
}
