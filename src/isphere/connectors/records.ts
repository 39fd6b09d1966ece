import type { BridgeContact, BridgeFile, BridgeGroup } from '../../common/isphere/bridgeRecords';
import { matchConfidence } from './confidence';
import type { ContactRecord, ContentType, FileRecord, GroupRecord, MessageRecord, SourceName } from './types';

/** A contact as any source holds it (the bridge protocol's fields), before the contract's source and confidence. */
export type ContactFields = Omit<BridgeContact, 'active'>;

export type GroupFields = Omit<BridgeGroup, 'archived'>;

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

const CONTENT_TYPES: readonly ContentType[] = ['text', 'image', 'file', 'rich', 'notify', 'unknown'];

/** A message as a source holds it (the bridge protocol's fields). */
export interface MessageFields {
  message_id: string;
  sender_id: string | null;
  sender_name: string | null;
  content_type: string;
  content_text: string;
  attachments: { file_id: string; file_name: string; size_bytes: number | null }[];
  created_at: string | null;
  received_at: string | null;
  raw_ref: string;
}

/** A file's metadata as any source holds it: the bridge protocol's record. */
export type FileFields = BridgeFile;

/**
 * Where a file can be fetched from, for `receive_files` in download mode:
 * the source and the file id. Null from a source that cannot download.
 */
export const downloadRef = (source: SourceName, fileId: string, canDownload: boolean): string | null => (canDownload ? `${source}/${fileId}` : null);

/** The contract's message: a content type it does not know is `unknown`, never passed through. */
export function messageRecord(m: MessageFields, source: SourceName, canDownload: boolean): MessageRecord {
  return {
    message_id: m.message_id,
    sender_id: m.sender_id,
    sender_name: m.sender_name,
    content_type: (CONTENT_TYPES as readonly string[]).includes(m.content_type) ? (m.content_type as ContentType) : 'unknown',
    content_text: m.content_text,
    attachments: m.attachments.map((a) => ({ file_id: a.file_id, file_name: a.file_name, size_bytes: a.size_bytes, download_ref: downloadRef(source, a.file_id, canDownload) })),
    created_at: m.created_at,
    received_at: m.received_at,
    source,
    raw_ref: m.raw_ref,
  };
}

/** The contract's file: `saved_path` stays null until a download writes it; `sha256` is what the source says of the bytes. */
export function fileRecord(f: FileFields, source: SourceName, canDownload: boolean): FileRecord {
  return {
    file_id: f.file_id,
    message_id: f.message_id,
    conversation_id: f.conversation_id,
    file_name: f.file_name,
    size_bytes: f.size_bytes,
    mime_type: f.mime_type,
    created_at: f.created_at,
    download_ref: downloadRef(source, f.file_id, canDownload),
    saved_path: null,
    sha256: f.sha256,
    source,
  };
}
