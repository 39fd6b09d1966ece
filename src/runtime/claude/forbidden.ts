import type { HookCallback } from '@anthropic-ai/claude-agent-sdk';

/**
 * The runtime's shadow tools that compete with Dipper's (the team spec's
 * "Forbidden tools"): each names the tool to use instead. They are removed
 * from the model's list (layer 1), and the pre-tool hook denies any that
 * still reaches a call (layer 2), with this text as the reason.
 */
export const FORBIDDEN: Record<string, { use: string; event: 'disallowed_alias.denied' | 'ask_user_question.redirected' }> = {
  SendMessage: { use: 'mcp__beidou__send_message: messages go through the agent inbox and its reply gate', event: 'disallowed_alias.denied' },
  TodoWrite: {
    use: 'mcp__beidou__declare_plan and mcp__beidou__update_plan_task to track work, and mcp__beidou__signal_review(detail=...) to hand it over',
    event: 'disallowed_alias.denied',
  },
  AskUserQuestion: { use: 'mcp__beidou__ask_user: questions climb your chain of leaders before they reach a person', event: 'ask_user_question.redirected' },
};

export function denyReason(tool: string): string | null {
  const rule = FORBIDDEN[tool];
  return rule ? `${tool} is not available in a Dipper team. Use ${rule.use}. (team-tool-surface, "Forbidden tools")` : null;
}

/**
 * Layer 2: a call that still reaches a forbidden tool is denied, with the
 * Dipper tool to use as the reason the model reads, and recorded.
 */
export function forbiddenHook(record: (event: string, tool: string) => Promise<void>, log: (line: string) => void): HookCallback {
  return async (input) => {
    if (input.hook_event_name !== 'PreToolUse') return {};
    const reason = denyReason(input.tool_name);
    if (!reason) return {};
    const event = FORBIDDEN[input.tool_name].event;
    log(`denied ${input.tool_name} (${event})`);
    await record(event, input.tool_name).catch((err: unknown) => log(`recording ${event} failed: ${err instanceof Error ? err.message : String(err)}`));
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
  };
}

/** Tools Dipper serves: the gateway checks their review gate itself. */
const DIPPER_TOOL = /^mcp__(beidou|agentteam|isphere)__/;

/**
 * The review gate for every other tool (a shell, a file edit, an
 * operator's MCP server): while children wait for this agent's review it
 * may use only the gate's Dipper tools. The gateway decides and records;
 * `ask` answers its refusal, or null. When the gateway cannot be asked the
 * call is denied too: the gate is never skipped by an outage.
 */
export function reviewGateHook(ask: (tool: string) => Promise<string | null>, log: (line: string) => void): HookCallback {
  return async (input) => {
    if (input.hook_event_name !== 'PreToolUse' || DIPPER_TOOL.test(input.tool_name) || input.tool_name in FORBIDDEN) return {};
    let refusal: string | null;
    try {
      refusal = await ask(input.tool_name);
    } catch (err) {
      log(`review gate not checked for ${input.tool_name}: ${err instanceof Error ? err.message : String(err)}`);
      refusal = `${input.tool_name} was not run: Dipper could not check whether reviews wait for you. Try again in a moment.`;
    }
    if (refusal === null) return {};
    log(`denied ${input.tool_name} (review gate)`);
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: refusal } };
  };
}
