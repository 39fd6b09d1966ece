import path from 'node:path';
import { NEVER_PASSED, type RuntimeChoice } from '../../src/config';
import type { LaunchPayload } from '../../src/common/launchPayload';

/** Where the system's programs are, after the directory of the node running Dipper (so `node` is the same one). */
function sanePath(): string {
  return [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
}

/**
 * The whole environment of an agent process, built from nothing: the
 * worker's own environment holds the token-signing secret and the operator
 * token, so none of it is inherited. An agent gets a PATH, HOME and locale,
 * who it is and where Dipper is, then what the operator chose for its
 * runtime: fixed values (`env`) and variables copied from the worker by
 * name (`pass_env`, for a model key kept out of the configuration).
 */
export function agentEnv(choice: RuntimeChoice, payload: LaunchPayload, home: string, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {
    PATH: sanePath(),
    HOME: home,
    LANG: 'C.UTF-8',
    DIPPER_MCP_URL: payload.mcp_url,
    DIPPER_TASK_MCP_URL: payload.task_mcp_url,
    DIPPER_ISPHERE_MCP_URL: payload.isphere_mcp_url,
    DIPPER_INBOX_URL: payload.inbox_url,
    DIPPER_AGENT_TOKEN: payload.token,
    DIPPER_AGENT_ID: payload.agent_id,
    DIPPER_RUN_ID: payload.run_id,
  };
  // config refuses Dipper's secrets in `env` and `pass_env`; the check here is a second line.
  for (const [name, value] of Object.entries(choice.env ?? {})) if (!NEVER_PASSED.test(name)) env[name] = value;
  for (const name of choice.pass_env ?? []) {
    const value = from[name];
    if (value !== undefined && !NEVER_PASSED.test(name)) env[name] = value;
  }
  return env;
}
