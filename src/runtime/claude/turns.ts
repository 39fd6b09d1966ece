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
