import { createHash } from 'node:crypto';
import type { BridgeContact, BridgeConversation, BridgeGroup } from '../../common/isphere/bridgeRecords';
import type { FileMeta, Message, SimSeed } from './types';

export interface StoredFile {
  meta: FileMeta;
  bytes: Buffer;
}

/** Everything the reads see. Records are never changed in place: a send only adds. */
export interface World {
  contacts: BridgeContact[];
  groups: BridgeGroup[];
  conversations: BridgeConversation[];
  messages: Message[];
  files: StoredFile[];
}

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** RFC3339 UTC with milliseconds, the only form the simulator answers, so times also compare as text. */
export function utc(time: string | number): string {
  const ms = typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(ms)) throw new Error(`not a time: ${String(time)}`);
  return new Date(ms).toISOString();
}

export const rawRef = (kind: string, id: string): string => `sim:${kind}:${id}`;

/** The seed with everything derivable filled in; a seed that contradicts itself is refused at start. */
export function worldFromSeed(seed: SimSeed): World {
  const conversations = seed.conversations.map((c) => ({ ...c }));
  const conversationIds = new Set(conversations.map((c) => c.conversation_id));
  const seedMessages = new Map(seed.messages.map((m) => [m.message_id, m]));
  const files = seed.files.map((f): StoredFile => {
    const message = seedMessages.get(f.message_id);
    if (!message) throw new Error(`seed file ${f.file_id} belongs to an unknown message ${f.message_id}`);
    const meta: FileMeta = {
      file_id: f.file_id,
      message_id: f.message_id,
      conversation_id: message.conversation_id,
      file_name: f.file_name,
      size_bytes: f.bytes.length,
      mime_type: f.mime_type,
      created_at: utc(message.created_at),
      sha256: sha256Hex(f.bytes),
    };
    return { meta, bytes: f.bytes };
  });
  const messages = seed.messages.map((m): Message => {
    if (!conversationIds.has(m.conversation_id)) throw new Error(`seed message ${m.message_id} is in an unknown conversation ${m.conversation_id}`);
    return {
      message_id: m.message_id,
      conversation_id: m.conversation_id,
      sender_id: m.sender_id,
      sender_name: m.sender_name,
      content_type: m.content_type,
      content_text: m.content_text,
      attachments: files.filter((f) => f.meta.message_id === m.message_id).map(({ meta }) => attachmentOf(meta)),
      created_at: utc(m.created_at),
      received_at: utc(m.received_at),
      raw_ref: rawRef('message', m.message_id),
    };
  });
  return {
    contacts: seed.contacts.map((c) => ({ ...c, raw_ref: rawRef('contact', c.contact_id) })),
    groups: seed.groups.map((g) => ({ ...g, raw_ref: rawRef('group', g.group_id) })),
    conversations,
    messages,
    files,
  };
}

export function attachmentOf(meta: FileMeta): Message['attachments'][number] {
  return { file_id: meta.file_id, file_name: meta.file_name, size_bytes: meta.size_bytes, mime_type: meta.mime_type };
}
