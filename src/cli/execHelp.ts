/* What `dipper exec` promises a script, kept apart from the command so `dipper --help` loads no MCP client. */

/** Exit codes, as `dipper exec --help` documents them. */
export const EXIT = { ok: 0, toolError: 1, usage: 2, noCall: 3 } as const;

/** The contract a script relies on, shown under `dipper exec --help`. */
export const EXEC_HELP = `
Calling a tool:
  echo '{"scope":"all"}' | dipper exec beidou list_peers -
  The call goes to <url>/mcp/<surface> as the agent whose token is given
  (--token or DIPPER_AGENT_TOKEN; the token is never printed).

Output and exit codes:
  0  the tool's result (its structuredContent) as JSON on stdout
  1  the tool refused: its error, {"error":{"code":...,"message":...}}, as JSON
     on stdout (a refusal is the tool's answer, so it goes where answers go)
  2  usage: unknown surface or tool, no token, stdin not one JSON object;
     a message on stderr
  3  no call was made: gateway unreachable, token refused, request turned
     away; a message on stderr

Without the network:
  dipper exec [<surface>]                  list tools (also --list)
  dipper exec <surface> <tool> --help      a tool's description, annotations, input fields
  dipper exec <surface> <tool> --input-schema | --output-schema
  A task board tool can also be named by its route, <domain> <action>:
  dipper exec task list - is dipper exec agentteam task_list -.
`;
