import { expiryOf, mintAgentToken } from '../auth/tokens';
import type { Rules, Text } from './pure/content';

/** Facts needed to start an agent's lifecycle; decided by the leader's workflow. */
export interface AgentIdentity {
  runId: string;
  agentId: string;
  name: string;
  role: string;
  skill: string;
  model?: string;
  /** Team this agent is a member of; null for the root. */
  teamId: string | null;
  /** Leader of that team; null for the root, whose leader is the user. */
  leaderId: string | null;
  depth: number;
  planTaskId?: string;
  /** Workspace folder of the team the agent belongs to (the run's workspace for the root). */
  workspacePath: string;
  /** The host the run is pinned to (workflows/host.ts); absent on one host. */
  host?: string;
  artifactsPath?: string;
}

/** What the runtime adapter is given to start the agent. Tokens are minted by the activity, never stored here. */
export interface LaunchSpec {
  firstMessage: Text;
  roleDescription: Text;
  rules: Rules;
}

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
  /** The task board's MCP endpoint (the agentteam tools); the same token reaches it. */
  task_mcp_url: string;
  /** The isphere tools (iSphere messaging), same token. */
  isphere_mcp_url: string;
  inbox_url: string;
  skill_body: string;
  /** The task; for an agent that may still spawn, a [SKILLS] block naming the skills it can give them; then a [TASK BOARD] block naming its boards. */
  first_message: string;
  /** Skills that exist, for agents this one spawns (empty at the deepest level, which may not spawn). */
  skills: string[];
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
  /** Every skill's name (SkillCatalog.names) and the deepest level an agent may spawn at. */
  skillNames: string[];
  maxDepth: number;
  /** Whether the agentteam tools are served (a [TASK BOARD] block tells each agent its boards). */
  taskBoards: boolean;
}

/** A launch spec whose stored texts have been read back (ContentStore.resolve): long rules come back as their JSON. */
export type ReadLaunch = { [K in keyof LaunchSpec]: K extends 'rules' ? string[] | string : string };

/** The rules of a read launch, whichever way they were kept (src/common/pure/content.ts, Rules). */
function rulesOf(rules: string[] | string): string[] {
  return typeof rules === 'string' ? (JSON.parse(rules) as string[]) : rules;
}

export function buildPayload(
  deps: PayloadDeps,
  id: AgentIdentity,
  launch: ReadLaunch,
  skillBody: string,
  mode: LaunchPayload['mode'],
  /** The launch the token belongs to: its generation and when it was made. */
  launched: { gen: number; issuedAt: number },
): LaunchPayload {
  // Agents cannot discover skills otherwise (a spawn with an unknown one is refused): a leader is told up front.
  const skills = id.depth < deps.maxDepth ? deps.skillNames : [];
  const blocks = [launch.firstMessage, skills.length > 0 ? skillsBlock(skills) : null, deps.taskBoards ? taskBoardBlock(id) : null];
  const firstMessage = blocks.filter((b) => b !== null).join('\n\n');
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
    task_mcp_url: `${deps.publicUrl}/mcp/agentteam`,
    isphere_mcp_url: `${deps.publicUrl}/mcp/isphere`,
    inbox_url: `${deps.publicUrl}/api/runtime/inbox`,
    skill_body: skillBody.split('{role_description}').join(launch.roleDescription),
    first_message: firstMessage,
    skills,
    rules: rulesOf(launch.rules),
    workspace_path: id.workspacePath,
    artifacts_path: id.artifactsPath ?? null,
    mode,
  };
}

/** The closing block of a first message, naming what spawn_agent, create_team and declare_plan accept as `skill`. */
export function skillsBlock(names: string[]): string {
  return `[SKILLS]\nSkills you can give the agents you spawn (the \`skill\` of spawn_agent, create_team and plan tasks): ${names.join(', ')}.\n[/SKILLS]`;
}

/**
 * The closing block of a first message: the boards an agent's task tools
 * take as `channel`. It cannot ask for them otherwise (task_list needs a
 * board), and it cannot know its run id without being told.
 */
export function taskBoardBlock(id: Pick<AgentIdentity, 'runId' | 'teamId'>): string {
  const team = id.teamId ? `, ${id.teamId} (your team)` : '';
  return `[TASK BOARD]\nYour task boards (the \`channel\` of the task_* tools): ${id.runId} (everyone in this run)${team}. A team you create gets a board named by its team_id.\n[/TASK BOARD]`;
}
