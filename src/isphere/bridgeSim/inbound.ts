import { BridgeError } from './errors';
import type { InboundBody } from './inputs';
import { nextId, type SimState } from './state';
import type { Message } from './types';
import { rawRef, utc } from './world';

/**
 * Messages arriving from the other side of a conversation (a control, for
 * tests and the demo): `count` copies of one text, a millisecond apart,
 * from `created_at` (default now) on. A text may be long, to test budgets.
 */
export function receive(state: SimState, body: InboundBody, now: number): { message_ids: string[] } {
  const conversation = state.conversation(body.conversation_id);
  if (!conversation) throw new BridgeError(404, 'conversation_not_found', `No conversation ${body.conversation_id}.`);
  const start = body.created_at === undefined ? now : Date.parse(body.created_at);
  const ids: string[] = [];
  for (let i = 0; i < (body.count ?? 1); i++) {
    const id = nextId('m_', 6, state.world.messages.map((m) => m.message_id));
    const at = utc(start + i);
    const message: Message = {
      message_id: id,
      conversation_id: conversation.conversation_id,
      sender_id: body.sender_id ?? conversation.peer_id,
      sender_name: body.sender_name ?? conversation.display_name,
      content_type: 'text',
      content_text: body.content_text,
      attachments: [],
      created_at: at,
      received_at: at,
      raw_ref: rawRef('message', id),
    };
    state.world.messages.push(message);
    ids.push(id);
  }
  return { message_ids: ids };
}
