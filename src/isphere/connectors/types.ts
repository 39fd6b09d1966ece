import type { IsphereCode } from '../../common/isphere/errors';

/** Where iSphere data can come from, in the order `auto` tries them (docs/isphere-bridge.md, "Sources"). */
export const AUTO_ORDER = ['bridge', 'local_readonly', 'network', 'uia'] as const;
export type SourceName = (typeof AUTO_ORDER)[number] | 'mock';
/** What a caller may ask for: any source, or `auto`. `mock` is the operator's choice alone, never a caller's. */
export type SourcePreference = (typeof AUTO_ORDER)[number] | 'auto';

/** What a connector can do; `auto` skips a source that cannot do what the call needs. */
export type Capability = 'search_contacts' | 'search_groups' | 'find_conversations' | 'read_messages' | 'list_files' | 'resolve_targets';

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** A contact as the tools contract returns it. */
export interface ContactRecord {
  contact_id: string;
  display_name: string;
  account: string | null;
  department: string | null;
  title: string | null;
  source: SourceName;
  /** How well the record matches the query, 0-1 (src/isphere/connectors/confidence.ts). */
  confidence: number;
  raw_ref: string;
}

export interface GroupRecord {
  group_id: string;
  display_name: string;
  member_count: number | null;
  owner_ref: string | null;
  source: SourceName;
  confidence: number;
  raw_ref: string;
}

export interface ContactSearch {
  query: string;
  limit: number;
  cursor?: string;
  include_inactive: boolean;
}

export interface GroupSearch {
  query: string;
  limit: number;
  cursor?: string;
  include_archived: boolean;
}

/** A conversation as sources hold it; `peer_id` is the contact (direct) or group (group) on the other side. */
export interface ConversationRecord {
  conversation_id: string;
  conversation_type: 'direct' | 'group' | 'system';
  display_name: string;
  peer_id: string | null;
}

export type ContentType = 'text' | 'image' | 'file' | 'rich' | 'notify' | 'unknown';

export interface MessageRecord {
  message_id: string;
  sender_id: string | null;
  sender_name: string | null;
  content_type: ContentType;
  content_text: string;
  attachments: { file_id: string; file_name: string; size_bytes: number | null; download_ref: string | null }[];
  created_at: string | null;
  received_at: string | null;
  source: SourceName;
  raw_ref: string;
}

export interface FileRecord {
  file_id: string;
  message_id: string | null;
  conversation_id: string | null;
  file_name: string;
  size_bytes: number | null;
  mime_type: string | null;
  created_at: string | null;
  download_ref: string | null;
  saved_path: string | null;
  sha256: string | null;
  source: SourceName;
}

export interface ConversationSearch {
  query: string;
  conversation_type?: 'direct' | 'group' | 'system';
  limit: number;
  cursor?: string;
}

export interface MessageRead {
  conversation_id: string;
  /** RFC3339 UTC; messages created at or after it. */
  since?: string;
  limit: number;
  cursor?: string;
}

export interface FileList {
  conversation_id?: string;
  message_id?: string;
  limit: number;
  cursor?: string;
}

/**
 * One source of iSphere data. A connector declares what it can do and
 * answers in the contract's records; it fails with a ConnectorError in the
 * contract's codes. It never logs in, never decrypts, and never touches a
 * client process.
 */
export interface Connector {
  readonly name: SourceName;
  readonly capabilities: ReadonlySet<Capability>;
  searchContacts(q: ContactSearch): Promise<Page<ContactRecord>>;
  searchGroups(q: GroupSearch): Promise<Page<GroupRecord>>;
  /** One contact by id, an inactive one too (`resolve_targets`); TARGET_NOT_FOUND when there is none. */
  contact?(id: string): Promise<{ contact_id: string; display_name: string; department: string | null; account?: string | null; title?: string | null; active: boolean }>;
  /** One group by id, an archived one too (`resolve_targets`). */
  group?(id: string): Promise<{ group_id: string; display_name: string; member_count: number | null; owner_ref?: string | null; archived: boolean }>;
  /** Conversations whose name contains the query (`find_conversations`). */
  findConversations?(q: ConversationSearch): Promise<Page<ConversationRecord>>;
  /** One conversation by id; TARGET_NOT_FOUND when there is none (`read_messages`). */
  conversation?(id: string): Promise<ConversationRecord>;
  /** A conversation's messages, newest first (`read_messages`). */
  readMessages?(q: MessageRead): Promise<Page<MessageRecord>>;
  /** File metadata, newest first (`list_files`). */
  listFiles?(q: FileList): Promise<Page<FileRecord>>;
}

/** A source `auto` tried before the one that answered, and why it moved on. */
export interface Fallback {
  source: SourceName;
  code: IsphereCode;
}
