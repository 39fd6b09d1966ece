import { FORBIDDEN, forbiddenHook, reviewGateHook } from '../../src/runtime/claude/forbidden';

const call = (tool: string) =>
  forbiddenHook(
    async (event, name) => void recorded.push({ event, tool: name }),
    () => undefined,
  )({ hook_event_name: 'PreToolUse', tool_name: tool, tool_input: {}, tool_use_id: 't1', session_id: 's', transcript_path: '/dev/null', cwd: '/' } as never, 't1', {
    signal: new AbortController().signal,
  });
let recorded: Array<{ event: string; tool: string }> = [];
beforeEach(() => {
  recorded = [];
});

describe("the claude runtime's forbidden-tool hook (layer 2)", () => {
  it.each([
    ['SendMessage', 'disallowed_alias.denied', 'mcp__beidou__send_message'],
    ['TodoWrite', 'disallowed_alias.denied', 'mcp__beidou__declare_plan'],
    ['AskUserQuestion', 'ask_user_question.redirected', 'mcp__beidou__ask_user'],
  ])('denies %s, names the Dipper tool to use, and records %s', async (tool, event, pointer) => {
    const out = (await call(tool)) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(out.hookSpecificOutput.permissionDecisionReason).toContain(pointer);
    expect(recorded).toEqual([{ event, tool }]);
  });

  it('lets every other tool through untouched and records nothing', async () => {
    expect(await call('Bash')).toEqual({});
    expect(await call('mcp__beidou__send_message')).toEqual({});
    expect(recorded).toEqual([]);
  });

  it('covers exactly the spec table and raw AskUserQuestion', () => {
    expect(Object.keys(FORBIDDEN).sort()).toEqual(['AskUserQuestion', 'SendMessage', 'TodoWrite']);
  });
});

describe("the claude runtime's review-gate hook", () => {
  const gate = (ask: (tool: string) => Promise<string | null>, tool: string) =>
    reviewGateHook(ask, () => undefined)({ hook_event_name: 'PreToolUse', tool_name: tool, tool_input: {}, tool_use_id: 't1', session_id: 's', transcript_path: '/dev/null', cwd: '/' } as never, 't1', {
      signal: new AbortController().signal,
    });
  const reasonOf = (out: unknown) => (out as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } }).hookSpecificOutput;

  it("asks the gateway about tools Dipper does not serve, and denies with the gateway's refusal", async () => {
    const asked: string[] = [];
    const ask = async (tool: string) => (asked.push(tool), tool === 'Write' ? 'Write waits until you answer your reviews.' : null);
    expect(reasonOf(await gate(ask, 'Write'))).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'Write waits until you answer your reviews.' });
    expect(await gate(ask, 'Read')).toEqual({});
    expect(await gate(ask, 'mcp__docs__search')).toEqual({});
    // Dipper's own tools are gated at the gateway, and forbidden ones by their own hook: neither is asked about.
    expect(await gate(ask, 'mcp__beidou__declare_plan')).toEqual({});
    expect(await gate(ask, 'SendMessage')).toEqual({});
    expect(asked).toEqual(['Write', 'Read', 'mcp__docs__search']);
  });

  it('denies when the gateway cannot be asked: an outage never opens the gate', async () => {
    const out = reasonOf(await gate(() => Promise.reject(new Error('connection refused')), 'Bash'));
    expect(out.permissionDecision).toBe('deny');
    expect(out.permissionDecisionReason).toContain('could not check');
  });
});
