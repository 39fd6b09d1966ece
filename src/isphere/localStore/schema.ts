/**
 * The local store `local_readonly` reads: a plaintext SQLite export of an
 * iSphere client's data (docs/isphere-local-store.md). Dipper only opens
 * it read-only; whoever exports it writes this schema.
 */
export const STORE_FORMAT = 'dipper-isphere-export';
export const STORE_VERSION = '1';

export const STORE_SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE contacts (
  contact_id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  account TEXT,
  department TEXT,
  title TEXT,
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  raw_ref TEXT NOT NULL
);
CREATE TABLE groups (
  group_id TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  member_count INTEGER,
  owner_ref TEXT,
  archived INTEGER NOT NULL CHECK (archived IN (0, 1)),
  raw_ref TEXT NOT NULL
);
CREATE TABLE conversations (
  conversation_id TEXT PRIMARY KEY,
  conversation_type TEXT NOT NULL CHECK (conversation_type IN ('direct', 'group', 'system')),
  display_name TEXT NOT NULL,
  peer_id TEXT
);
CREATE TABLE messages (
  message_id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL,
  sender_id TEXT,
  sender_name TEXT,
  content_type TEXT NOT NULL,
  content_text TEXT NOT NULL,
  created_at TEXT,
  received_at TEXT,
  raw_ref TEXT NOT NULL
);
CREATE INDEX messages_by_conversation ON messages (conversation_id, created_at, message_id);
CREATE TABLE attachments (
  file_id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL,
  file_name TEXT NOT NULL,
  size_bytes INTEGER,
  mime_type TEXT,
  sha256 TEXT
);
CREATE INDEX attachments_by_message ON attachments (message_id);
`;
