import { BridgeError } from './errors';
import { MAX_FILE_BYTES, type FileBody, type MessageBody } from './inputs';
import { mimeTypeOf } from './mime';
import { nextId, type FileAnswer, type MessageAnswer, type SendRecord, type SimState } from './state';
import { conversationFor } from './targets';
import type { FileMeta, Message } from './types';
import { attachmentOf, rawRef, sha256Hex } from './world';

/**
 * The two sends. Each client_message_id is accepted once: a repeat asking
 * the same thing gets the first answer marked duplicate and delivers
 * nothing; a repeat asking something else is a conflict. That is what lets a
 * connector whose answer was lost send again without sending twice.
 */

export function sendMessage(state: SimState, body: MessageBody, acceptedAt: string): MessageAnswer {
  const contentSha = sha256Hex(body.content_text);
  const fingerprint = JSON.stringify(['message', body.target_type, body.target_id, contentSha]);
  const repeat = repeatOf(state, body.client_message_id, fingerprint);
  if (repeat) return repeat as MessageAnswer;

  const conversation = conversationFor(state, body.target_type, body.target_id);
  const messageRef = nextMessageId(state);
  state.world.messages.push(ownMessage(state, messageRef, conversation.conversation_id, 'text', body.content_text, [], acceptedAt));
  const answer: MessageAnswer = {
    client_message_id: body.client_message_id,
    message_ref: messageRef,
    conversation_id: conversation.conversation_id,
    accepted_at: acceptedAt,
    duplicate: false,
  };
  accept(state, body, { kind: 'message', fingerprint, answer }, { message_ref: messageRef, content_sha256: contentSha });
  return answer;
}

export function sendFile(state: SimState, body: FileBody, acceptedAt: string): FileAnswer {
  // Measured from the text, so an oversized file is refused before it is decoded.
  const padding = body.content_base64.endsWith('==') ? 2 : body.content_base64.endsWith('=') ? 1 : 0;
  if ((body.content_base64.length / 4) * 3 - padding > MAX_FILE_BYTES) {
    throw new BridgeError(413, 'file_too_large', `content_base64: the file is larger than ${MAX_FILE_BYTES} bytes (20 MiB).`);
  }
  const bytes = Buffer.from(body.content_base64, 'base64');
  const sha256 = sha256Hex(bytes);
  const fingerprint = JSON.stringify(['file', body.target_type, body.target_id, body.file_name, sha256, body.caption ?? null]);
  const repeat = repeatOf(state, body.client_message_id, fingerprint);
  if (repeat) return repeat as FileAnswer;

  const conversation = conversationFor(state, body.target_type, body.target_id);
  const messageRef = nextMessageId(state);
  const fileRef = nextId('f_', 4, state.world.files.map((f) => f.meta.file_id));
  const meta: FileMeta = {
    file_id: fileRef,
    message_id: messageRef,
    conversation_id: conversation.conversation_id,
    file_name: body.file_name,
    size_bytes: bytes.length,
    mime_type: mimeTypeOf(body.file_name),
    created_at: acceptedAt,
    sha256,
  };
  state.world.files.push({ meta, bytes });
  const contentType = meta.mime_type.startsWith('image/') ? 'image' : 'file';
  state.world.messages.push(ownMessage(state, messageRef, meta.conversation_id, contentType, body.caption ?? body.file_name, [attachmentOf(meta)], acceptedAt));
  const answer: FileAnswer = {
    client_message_id: body.client_message_id,
    file_ref: fileRef,
    conversation_id: meta.conversation_id,
    sha256,
    size_bytes: bytes.length,
    accepted_at: acceptedAt,
    duplicate: false,
  };
  accept(state, body, { kind: 'file', fingerprint, answer }, { file_ref: fileRef, content_sha256: sha256 });
  return answer;
}

/** GET /v1/sends/{id}: whether the bridge accepted this send, and what became of it. */
export function findSend(state: SimState, clientMessageId: string) {
  const record = state.sends.get(clientMessageId);
  if (!record) throw new BridgeError(404, 'send_not_found', `No send was accepted with client_message_id ${clientMessageId}.`);
  const ref = 'message_ref' in record.answer ? { message_ref: record.answer.message_ref } : { file_ref: record.answer.file_ref };
  return { client_message_id: clientMessageId, kind: record.kind, ...ref, accepted_at: record.answer.accepted_at };
}

function repeatOf(state: SimState, clientMessageId: string, fingerprint: string): MessageAnswer | FileAnswer | null {
  const earlier = state.sends.get(clientMessageId);
  if (!earlier || !state.dedupe) return null;
  if (earlier.fingerprint !== fingerprint) {
    throw new BridgeError(409, 'client_message_id_conflict', `client_message_id ${clientMessageId} was already used for a different ${earlier.kind} send.`);
  }
  return { ...earlier.answer, duplicate: true };
}

function accept(state: SimState, body: MessageBody | FileBody, record: SendRecord, delivered: { message_ref?: string; file_ref?: string; content_sha256: string }): void {
  state.sends.set(body.client_message_id, record);
  state.deliveries.push({
    client_message_id: body.client_message_id,
    kind: record.kind,
    target_type: body.target_type,
    target_id: body.target_id,
    conversation_id: record.answer.conversation_id,
    ...delivered,
    accepted_at: record.answer.accepted_at,
  });
}

const nextMessageId = (state: SimState) => nextId('m_', 6, state.world.messages.map((m) => m.message_id));

/** A sent message, as the conversation shows it afterwards: from the logged-in account. */
function ownMessage(state: SimState, id: string, conversationId: string, contentType: Message['content_type'], text: string, attachments: Message['attachments'], at: string): Message {
  return {
    message_id: id,
    conversation_id: conversationId,
    sender_id: state.account.account_id,
    sender_name: state.account.display_name,
    content_type: contentType,
    content_text: text,
    attachments,
    created_at: at,
    received_at: at,
    raw_ref: rawRef('message', id),
  };
}
