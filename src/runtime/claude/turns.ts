import crypto from 'node:crypto';

import type { InboxItem } from '../inboxItem';

export type { InboxItem };

const LABELS: Record<string, string> = {
  message: 'MESSAGE',
  review_report: 'REVIEW REPORT',
  termination_request: 'TERMINATION REQUEST',
};

/**
 * The user turn an inbox item becomes. System items already carry their
 * own tag (`[INBOX QUESTION]`, `[WATCHDOG]`, `[FROM USER]`); the others
 * are tagged with their kind and sender, so the model knows whom to answer.
 */
export function turnText(item: InboxItem): string {
  const label = LABELS[item.kind];
  if (!label) return item.content;
  return `[${label} from ${item.from ?? 'unknown'}]\n${item.content}`;
}

/**
 * A UUID fixed by what it names: the same inbox item always becomes the
 * same transcript entry, so a runtime started again after a crash can see
 * whether the item already reached the session before feeding it twice.
 */
export function stableUuid(...parts: string[]): `${string}-${string}-${string}-${string}-${string}` {
  const h = crypto.createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** What a resumed session is told when its last turn was cut short by the crash. */
export const CONTINUE_AFTER_CRASH =
  '[SYSTEM] Your process stopped in the middle of a turn, and this session was resumed. A tool call you made just before may or may not have taken effect: check (list_pending_reviews, list_peers, list_ready, task_list) before repeating it, then carry on.';

/**
 * Whether the transcript's last turn was cut short: its user turn (a prompt,
 * or a tool's result) still waits for the model, or the model's last word
 * asked for a tool. A resumed session waits for new input, so such a turn
 * would never be finished: it is told to carry on. A turn that ended (the
 * model's last word is text) needs nothing.
 */
export function cutMidTurn(messages: readonly { type: string; message: unknown; parent_tool_use_id?: string | null }[]): boolean {
  const main = messages.filter((m) => (m.type === 'user' || m.type === 'assistant') && !m.parent_tool_use_id);
  const last = main.at(-1);
  if (!last) return false;
  if (last.type === 'user') return true;
  const content = (last.message as { content?: unknown } | null)?.content;
  return Array.isArray(content) && content.some((block) => (block as { type?: unknown } | null)?.type === 'tool_use');
}
