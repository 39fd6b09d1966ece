/**
 * The records of docs/isphere-bridge.md as the simulator answers them (the
 * shared protocol records, narrowed), and the seed it starts from.
 */

import type {
  BridgeAccount,
  BridgeAttachment,
  BridgeContact,
  BridgeConversation,
  BridgeFile,
  BridgeGroup,
  BridgeMessage,
  ContentType,
} from '../../common/isphere/bridgeRecords';

// The protocol's records, with what the simulator always knows made non-null.
export type Attachment = BridgeAttachment & { size_bytes: number; mime_type: string };
export type Message = BridgeMessage & { content_type: ContentType; attachments: Attachment[]; created_at: string; received_at: string };
export type FileMeta = BridgeFile & { message_id: string; conversation_id: string; size_bytes: number; mime_type: string; created_at: string; sha256: string };

/**
 * What the simulator starts from, and returns to on /_sim/reset. Anything
 * derivable is left out: references, attachments (from the files), a file's
 * size, hash, conversation and time (from its bytes and its message).
 */
export interface SimSeed {
  /** The person logged in to the client; messages they send carry this id. Not one of the contacts. */
  account: BridgeAccount;
  contacts: Omit<BridgeContact, 'raw_ref'>[];
  groups: Omit<BridgeGroup, 'raw_ref'>[];
  conversations: BridgeConversation[];
  /** Times are RFC3339; they are answered in UTC with milliseconds. */
  messages: Omit<Message, 'attachments' | 'raw_ref'>[];
  /** Each file is an attachment of one message. */
  files: { file_id: string; message_id: string; file_name: string; mime_type: string; bytes: Buffer }[];
}
