import { CONTINUE_AFTER_CRASH } from '../../runtime/claude/turns';

/**
 * A Messages API request read as a conversation a script can act on: the
 * agent's user turns (its first message, then what its runtime fed it from
 * the inbox) and every tool call the model made with the result it got,
 * in order. The scripted model keeps no state of its own: everything it
 * knows is in the request, as with a real model.
 */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  /** The result's text; for an MCP tool, Dipper's JSON answer. */
  result: string;
  isError: boolean;
}

/** A user turn; `midTurn` when the CLI handed it over inside a running turn (it wraps those, see unwrap). */
export type Entry = { kind: 'user'; text: string; midTurn?: true } | { kind: 'call'; call: ToolCall };

/**
 * How Claude Code hands the model a user message that arrived while a turn
 * ran: inside that turn, wrapped in its own words. Scripts see the message
 * as the runtime sent it.
 */
const MID_TURN = /^The user sent a new message while you were working:\n([\s\S]*?)\n\nThis is how Claude Code surfaces messages the user sends mid-turn/;

type Content = string | Array<Record<string, unknown>>;
interface RequestMessage {
  role: 'user' | 'assistant';
  content: Content;
}

export class Conversation {
  constructor(
    readonly system: string,
    /** Names of the tools offered, as the runtime spells them (`mcp__beidou__send_message`). */
    readonly tools: string[],
    readonly entries: Entry[],
  ) {}

  static of(body: { system?: unknown; tools?: unknown; messages?: unknown }): Conversation {
    const system = typeof body.system === 'string' ? body.system : Array.isArray(body.system) ? body.system.map((b: { text?: string }) => b.text ?? '').join('\n') : '';
    const tools = Array.isArray(body.tools) ? body.tools.map((t: { name?: string }) => String(t.name ?? '')) : [];
    const entries: Entry[] = [];
    const pending = new Map<string, { name: string; input: Record<string, unknown> }>();
    for (const message of (Array.isArray(body.messages) ? body.messages : []) as RequestMessage[]) {
      const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      const texts: string[] = [];
      for (const block of blocks) {
        if (message.role === 'assistant' && block.type === 'tool_use') pending.set(String(block.id), { name: String(block.name), input: (block.input ?? {}) as Record<string, unknown> });
        if (message.role !== 'user') continue;
        if (block.type === 'text') texts.push(String(block.text));
        if (block.type === 'tool_result') {
          const call = pending.get(String(block.tool_use_id));
          if (call) entries.push({ kind: 'call', call: { ...call, result: resultText(block.content), isError: block.is_error === true } });
        }
      }
      // The runtime's "carry on" after a crash mid-turn says nothing a script acts on: it sees the turn as it was cut, and
      // goes on from there, as a model that reads its transcript would (it does not redo a call whose result is in it).
      for (const text of texts.filter((t) => !t.startsWith('<system-reminder>') && !t.startsWith(CONTINUE_AFTER_CRASH)).map((t) => t.trim())) {
        const inner = MID_TURN.exec(text);
        if (inner) entries.push({ kind: 'user', text: inner[1], midTurn: true });
        else if (text) entries.push({ kind: 'user', text });
      }
    }
    return new Conversation(system, tools, entries);
  }

  /** The user turns' texts, in order. */
  get userTexts(): string[] {
    return this.entries.flatMap((e) => (e.kind === 'user' ? [e.text] : []));
  }

  /** Tool calls made so far (of one tool, by its short name, when given), in order. */
  calls(name?: string): ToolCall[] {
    return this.entries.flatMap((e) => (e.kind === 'call' && (name === undefined || shortName(e.call.name) === name) ? [e.call] : []));
  }

  /** What came last: the newest user text, or the newest tool result. */
  get last(): Entry | undefined {
    return this.entries[this.entries.length - 1];
  }

  /** The offered tool whose short name is `name` (`send_message` finds `mcp__beidou__send_message`). */
  tool(name: string): string | undefined {
    return this.tools.find((t) => shortName(t) === name);
  }
}

export function shortName(tool: string): string {
  return tool.split('__').pop() ?? tool;
}

/** A tool result's JSON, or null when it is not JSON. */
export function resultJson(call: ToolCall | undefined): Record<string, unknown> | null {
  if (!call) return null;
  try {
    const value: unknown = JSON.parse(call.result);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}
