import type { IsphereCode } from '../../../activities/isphere/errors';

/** Where iSphere data can come from, in the order `auto` tries them (docs/isphere-bridge.md, "Sources"). */
export const AUTO_ORDER = ['bridge', 'local_readonly', 'network', 'uia'] as const;
export type SourceName = (typeof AUTO_ORDER)[number] | 'mock';
/** What a caller may ask for: any source, or `auto`. `mock` is the operator's choice alone, never a caller's. */
export type SourcePreference = (typeof AUTO_ORDER)[number] | 'auto';

/** What a connector can do; `auto` skips a source that cannot do what the call needs. */
export type Capability = 'search_contacts' | 'search_groups';

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
}

/** A source `auto` tried before the one that answered, and why it moved on. */
export interface Fallback {
  source: SourceName;
  code: IsphereCode;
}
