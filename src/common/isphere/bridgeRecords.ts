/**
 * The records of the iSphere bridge protocol (docs/isphere-bridge.md), defined
 * once for both ends: the client that reads them (bridgeClient.ts, used by the
 * gateway's reads and the worker's sends) and the simulator that answers them
 * (src/isphere/bridgeSim). Field names are the protocol's (snake_case). A field
 * a real bridge may not know is nullable here; the simulator, which always
 * knows, narrows those fields in its own types.
 */

export type ConversationType = 'direct' | 'group' | 'system';
export type ContentType = 'text' | 'image' | 'file' | 'rich' | 'notify' | 'unknown';

/** One page of a bridge list. */
export interface BridgePage<T> {
  items: T[];
  next_cursor: string | null;
}

/** The person logged in to the client. */
export interface BridgeAccount {
  account_id: string;
  display_name: string;
}

export interface BridgeContact {
  contact_id: string;
  display_name: string;
  account: string | null;
  department: string | null;
  title: string | null;
  active: boolean;
  raw_ref: string;
}

export interface BridgeGroup {
  group_id: string;
  display_name: string;
  member_count: number | null;
  owner_ref: string | null;
  archived: boolean;
  raw_ref: string;
}

export interface BridgeConversation {
  conversation_id: string;
  conversation_type: ConversationType;
  display_name: string;
  /** The contact (direct) or group (group) on the other side; null for the system conversation. */
  peer_id: string | null;
}

export interface BridgeAttachment {
  file_id: string;
  file_name: string;
  size_bytes: number | null;
  mime_type: string | null;
}

export interface BridgeMessage {
  message_id: string;
  conversation_id: string;
  sender_id: string | null;
  sender_name: string | null;
  /** One of ContentType by the protocol; a string because a reader must treat any other value as `unknown`, not trust it. */
  content_type: string;
  content_text: string;
  attachments: BridgeAttachment[];
  created_at: string | null;
  received_at: string | null;
  raw_ref: string;
}

export interface BridgeFile {
  file_id: string;
  message_id: string | null;
  conversation_id: string | null;
  file_name: string;
  size_bytes: number | null;
  mime_type: string | null;
  created_at: string | null;
  sha256: string | null;
}

/** What the bridge answers a send, or a lookup of one by its client message id. */
export interface SendReceipt {
  client_message_id: string;
  message_ref?: string;
  file_ref?: string;
  conversation_id?: string;
  accepted_at: string;
  duplicate?: boolean;
}
