import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import type { LaunchPayload } from '../../src/common/launchPayload';
import { UsageTally } from '../../src/gateway/modelProxy';
import { Conversation } from '../../src/model/scripted/conversation';
import { agentOf, startScriptedModel } from '../../src/model/scripted/server';
import { agentLine, sessionIdFor } from '../../src/runtime/claude/settings';
import { CONTINUE_AFTER_CRASH, cutMidTurn, stableUuid, turnText } from '../../src/runtime/claude/turns';

const claude = (more: Record<string, unknown>) => JSON.stringify({ default: { kind: 'claude', ...more } });

describe('a claude runtime in the configuration', () => {
  it('refuses anything that would give its agents a model key or endpoint of their own', () => {
    expect(() => loadConfig({ DIPPER_RUNTIMES: claude({ pass_env: ['ANTHROPIC_API_KEY'] }) })).toThrow(/ANTHROPIC_API_KEY is not given to claude agents/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: claude({ env: { ANTHROPIC_BASE_URL: 'http://elsewhere' } }) })).toThrow(/ANTHROPIC_BASE_URL/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: claude({ pass_env: ['CLAUDE_CODE_OAUTH_TOKEN'] }) })).toThrow(/CLAUDE_CODE_OAUTH_TOKEN/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: claude({ pass_env: ['DIPPER_MODEL_API_KEY'] }) })).toThrow(/Dipper's own/);
  });

  it('checks its model and tools, and accepts another OS user as a command runtime does', () => {
    expect(() => loadConfig({ DIPPER_RUNTIMES: claude({ model: '' }) })).toThrow(/model must be a model name/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: claude({ allowed_tools: 'Bash' }) })).toThrow(/allowed_tools must be a list/);
    const config = loadConfig({ DIPPER_RUNTIMES: claude({ model: 'claude-x', allowed_tools: ['Read', 'Bash(git *)'], user: 'dipper-agent', pass_env: ['GITHUB_TOKEN'] }) });
    expect(config.runtimes.default).toMatchObject({ kind: 'claude', model: 'claude-x', user: 'dipper-agent' });
  });

  it('reads the operator key for the proxy from a file, and never lets it reach an agent', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'key-')), 'key');
    fs.writeFileSync(file, 'sk-from-file\n');
    expect(loadConfig({ DIPPER_MODEL_API_KEY_FILE: file }).model).toEqual({ upstreamUrl: 'https://api.anthropic.com', apiKey: 'sk-from-file' });
    expect(loadConfig({ DIPPER_MODEL_UPSTREAM_URL: 'http://127.0.0.1:9/' }).model.upstreamUrl).toBe('http://127.0.0.1:9');
  });
});

describe('inbox items as user turns', () => {
  it('tags messages with their kind and sender, and leaves system items as they are', () => {
    expect(turnText({ seq: 1, message_id: 'm1', kind: 'message', from: 'ag_1', content: 'hi' })).toBe('[MESSAGE from ag_1]\nhi');
    expect(turnText({ seq: 2, message_id: 'm2', kind: 'review_report', from: 'ag_2', content: '[REVIEW REQUIRED] x' })).toBe('[REVIEW REPORT from ag_2]\n[REVIEW REQUIRED] x');
    expect(turnText({ seq: 3, message_id: 'm3', kind: 'system', from: null, content: '[WATCHDOG] ping' })).toBe('[WATCHDOG] ping');
  });

  it('gives the same item the same UUID every time, and another item another', () => {
    const a = stableUuid('ag_1', 'session', 'm1');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(stableUuid('ag_1', 'session', 'm1')).toBe(a);
    expect(stableUuid('ag_1', 'session', 'm2')).not.toBe(a);
    expect(stableUuid('ag_1', 'other-session', 'm1')).not.toBe(a);
  });

  it('keeps the session across launches but a fresh one, in the agent\'s home', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'home-'));
    let n = 0;
    const next = () => `s${++n}`;
    const payload = (mode: LaunchPayload['mode']) => ({ mode }) as LaunchPayload;
    expect(sessionIdFor(payload('first'), home, next)).toBe('s1');
    expect(sessionIdFor(payload('resume'), home, next)).toBe('s1');
    expect(sessionIdFor(payload('first'), home, next)).toBe('s1');
    expect(sessionIdFor(payload('fresh'), home, next)).toBe('s2');
    expect(sessionIdFor(payload('resume'), home, next)).toBe('s2');
  });
});

describe('the scripted model', () => {
  it('reads a conversation: user turns without reminders, and each tool call with its result', () => {
    const c = Conversation.of({
      system: [{ type: 'text', text: `preset\n${agentLine({ name: 'lead "one"', skill: 'lead' } as LaunchPayload)}` }],
      tools: [{ name: 'mcp__beidou__send_message' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text: 'Do it.' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'mcp__beidou__send_message', input: { to: 'a' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '{"delivered":true}' }] }] },
      ],
    });
    expect(agentOf(c.system)).toEqual({ name: "lead 'one'", skill: 'lead' });
    expect(c.userTexts).toEqual(['Do it.']);
    expect(c.calls('send_message')).toEqual([{ name: 'mcp__beidou__send_message', input: { to: 'a' }, result: '{"delivered":true}', isError: false }]);
    expect(c.tool('send_message')).toBe('mcp__beidou__send_message');
  });

  it('streams a script\'s step as Messages API events, counts tokens, and answers side requests generically', async () => {
    const model = await startScriptedModel({ lead: () => ({ say: 'Sending.', calls: [{ tool: 'send_message', input: { to: 'a' } }, { tool: 'missing', input: {} }] }) });
    try {
      const body = { model: 'm', stream: true, system: agentLine({ name: 'x', skill: 'lead' } as LaunchPayload), tools: [{ name: 'mcp__beidou__send_message' }], messages: [{ role: 'user', content: 'go' }] };
      const text = await (await fetch(`${model.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
      const events = text.split('\n').filter((l) => l.startsWith('event: ')).map((l) => l.slice(7));
      expect(events).toEqual(['message_start', ...Array(3).fill(['content_block_start', 'content_block_delta', 'content_block_stop']).flat(), 'message_delta', 'message_stop']);
      expect(text).toContain('"partial_json":"{\\"to\\":\\"a\\"}"');
      expect(text).toContain('the tool missing is not offered');
      expect(text).toContain('"stop_reason":"tool_use"');
      const tally = new UsageTally();
      // Fed in pieces that split lines, as a network would.
      for (let i = 0; i < text.length; i += 7) tally.feed(new TextEncoder().encode(text.slice(i, i + 7)));
      expect(tally.total()).toEqual({ input_tokens: model.requests[0].reply.usage.input_tokens, output_tokens: model.requests[0].reply.usage.output_tokens });
      const side = await (await fetch(`${model.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'title?' }] }) })).json();
      expect(side).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'OK.' }], stop_reason: 'end_turn' });
      const count = (await (await fetch(`${model.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { input_tokens: number };
      expect(count.input_tokens).toBeGreaterThan(0);
    } finally {
      await model.close();
    }
  });

  it('counts cache reads and writes as input, from a JSON answer too', () => {
    const tally = new UsageTally();
    tally.feed(new TextEncoder().encode(JSON.stringify({ type: 'message', usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 7 } })));
    expect(tally.total()).toEqual({ input_tokens: 17, output_tokens: 7 });
  });
});

describe('a resumed session whose last turn was cut short', () => {
  const user = (content: unknown) => ({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null });
  const assistant = (content: unknown) => ({ type: 'assistant', message: { role: 'assistant', content }, parent_tool_use_id: null });
  const toolUse = { type: 'tool_use', id: 't1', name: 'mcp__beidou__terminate_child', input: {} };

  it('is told to carry on when the model was called for and never answered, or asked for a tool whose turn never ended', () => {
    expect(cutMidTurn([user('Do it.')])).toBe(true);
    expect(cutMidTurn([user('Do it.'), assistant([toolUse])])).toBe(true);
    expect(cutMidTurn([user('Do it.'), assistant([toolUse]), user([{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }])])).toBe(true);
  });

  it('is left alone when its last turn ended, or it has no transcript; a subagent\'s messages do not count', () => {
    expect(cutMidTurn([])).toBe(false);
    expect(cutMidTurn([user('Do it.'), assistant([toolUse]), user([{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }]), assistant([{ type: 'text', text: 'Done; waiting.' }])])).toBe(false);
    expect(cutMidTurn([user('Do it.'), assistant([{ type: 'text', text: 'Waiting.' }]), { ...user('sub task'), parent_tool_use_id: 'x' }])).toBe(false);
  });
});

it("the scripted model goes on from a cut turn: the runtime's carry-on note is not a new turn to act on", () => {
  const c = Conversation.of({
    messages: [
      { role: 'user', content: 'Write the draft.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'mcp__beidou__signal_review', input: { detail: '[REVIEW REQUIRED] x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '{"ok":true}' }, { type: 'text', text: CONTINUE_AFTER_CRASH }] },
    ],
  });
  expect(c.userTexts).toEqual(['Write the draft.']);
  expect(c.last).toMatchObject({ kind: 'call', call: { name: 'mcp__beidou__signal_review' } });
});
