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
`;
