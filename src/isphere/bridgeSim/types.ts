/**
 * The records of docs/isphere-bridge.md as the simulator answers them, and
 * the seed it starts from. Field names are the protocol's (snake_case).
 */

export type ConversationType = 'direct' | 'group' | 'system';
export type ContentType = 'text' | 'image' | 'file' | 'rich' | 'notify' | 'unknown';

export interface Account {
  account_id: string;
  display_name: string;
}

export interface Contact {
  contact_id: string;
  display_name: string;
  account: string | null;
  department: string | null;
  title: string | null;
  active: boolean;
  raw_ref: string;
}

export interface Group {
  group_id: string;
  display_name: string;
  member_count: number | null;
  owner_ref: string | null;
  archived: boolean;
  raw_ref: string;
}

export interface Conversation {
  conversation_id: string;
  conversation_type: ConversationType;
  display_name: string;
  /** The contact (direct) or group (group) on the other side; null for the system conversation. */
  peer_id: string | null;
}

export interface Attachment {
  file_id: string;
  file_name: string;
  size_bytes: number;
  mime_type: string;
}

export interface Message {
  message_id: string;
  conversation_id: string;
  sender_id: string | null;
  sender_name: string | null;
  content_type: ContentType;
  content_text: string;
  attachments: Attachment[];
  created_at: string;
  received_at: string;
  raw_ref: string;
}

export interface FileMeta {
  file_id: string;
  message_id: string;
  conversation_id: string;
  file_name: string;
  size_bytes: number;
  mime_type: string;
  created_at: string;
  sha256: string;
}

/**
 * What the simulator starts from, and returns to on /_sim/reset. Anything
 * derivable is left out: references, attachments (from the files), a file's
 * size, hash, conversation and time (from its bytes and its message).
 */
export interface SimSeed {
  /** The person logged in to the client; messages they send carry this id. Not one of the contacts. */
  account: Account;
  contacts: Omit<Contact, 'raw_ref'>[];
  groups: Omit<Group, 'raw_ref'>[];
  conversations: Conversation[];
  /** Times are RFC3339; they are answered in UTC with milliseconds. */
  messages: Omit<Message, 'attachments' | 'raw_ref'>[];
  /** Each file is an attachment of one message. */
  files: { file_id: string; message_id: string; file_name: string; mime_type: string; bytes: Buffer }[];
}
