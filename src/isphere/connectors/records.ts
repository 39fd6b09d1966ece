import { matchConfidence } from './confidence';
import type { ContactRecord, GroupRecord, SourceName } from './types';

/** A contact as any source holds it (the bridge protocol's fields), before the contract's source and confidence. */
export interface ContactFields {
  contact_id: string;
  display_name: string;
  account: string | null;
  department: string | null;
  title: string | null;
  raw_ref: string;
}

export interface GroupFields {
  group_id: string;
  display_name: string;
  member_count: number | null;
  owner_ref: string | null;
  raw_ref: string;
}

/** The contract's contact record: one shape and one confidence rule whichever source answered. */
export function contactRecord(c: ContactFields, source: SourceName, query: string): ContactRecord {
  return {
    contact_id: c.contact_id,
    display_name: c.display_name,
    account: c.account,
    department: c.department,
    title: c.title,
    source,
    confidence: matchConfidence(query, c.display_name, [c.department, c.title], [c.account]),
    raw_ref: c.raw_ref,
  };
}

export function groupRecord(g: GroupFields, source: SourceName, query: string): GroupRecord {
  return {
    group_id: g.group_id,
    display_name: g.display_name,
    member_count: g.member_count,
    owner_ref: g.owner_ref,
    source,
    confidence: matchConfidence(query, g.display_name),
    raw_ref: g.raw_ref,
  };
}
