import { ascending, descending, page, type Page } from './cursor';
import { BridgeError } from './errors';
import type { ContactsQuery, ConversationsQuery, FilesQuery, GroupsQuery, MessagesQuery } from './inputs';
import type { SimState } from './state';
import type { BridgeContact, BridgeConversation, BridgeGroup } from '../../common/isphere/bridgeRecords';
import type { FileMeta, Message } from './types';
import { utc, type StoredFile } from './world';

/** The read routes of docs/isphere-bridge.md, over the state as it is now. */

const fold = (text: string | undefined) => (text ?? '').trim().toLowerCase();

/** An empty query matches everything; otherwise any field containing it, case-insensitively. */
function matches(query: string, fields: (string | null)[]): boolean {
  return query === '' || fields.some((field) => field !== null && field.toLowerCase().includes(query));
}

export function listContacts(state: SimState, q: ContactsQuery): Page<BridgeContact> {
  const query = fold(q.query);
  const inactive = q.include_inactive === 'true';
  const items = state.world.contacts.filter((c) => (inactive || c.active) && matches(query, [c.display_name, c.account, c.department, c.title]));
  return page(items, { query: ['contacts', query, inactive], cursor: q.cursor, limit: q.limit, key: (c) => [c.display_name, c.contact_id], order: ascending });
}

export function listGroups(state: SimState, q: GroupsQuery): Page<BridgeGroup> {
  const query = fold(q.query);
  const archived = q.include_archived === 'true';
  const items = state.world.groups.filter((g) => (archived || !g.archived) && matches(query, [g.display_name]));
  return page(items, { query: ['groups', query, archived], cursor: q.cursor, limit: q.limit, key: (g) => [g.display_name, g.group_id], order: ascending });
}

export function listConversations(state: SimState, q: ConversationsQuery): Page<BridgeConversation> {
  const query = fold(q.query);
  const type = q.conversation_type ?? null;
  const items = state.world.conversations.filter((c) => (type === null || c.conversation_type === type) && matches(query, [c.display_name]));
  return page(items, { query: ['conversations', query, type], cursor: q.cursor, limit: q.limit, key: (c) => [c.display_name, c.conversation_id], order: ascending });
}

export function listMessages(state: SimState, conversationId: string, q: MessagesQuery): { conversation: BridgeConversation } & Page<Message> {
  const conversation = state.conversation(conversationId);
  if (!conversation) throw new BridgeError(404, 'conversation_not_found', `No conversation ${conversationId}.`);
  // Times are all canonical UTC, so they compare as text.
  const since = q.since === undefined ? null : utc(q.since);
  const items = state.world.messages.filter((m) => m.conversation_id === conversationId && (since === null || m.created_at >= since));
  const listed = page(items, {
    query: ['messages', conversationId, since],
    cursor: q.cursor,
    limit: q.limit,
    key: (m) => [m.created_at, m.message_id],
    order: descending,
  });
  return { conversation, ...listed };
}

export function listFiles(state: SimState, q: FilesQuery): Page<FileMeta> {
  if (q.conversation_id !== undefined && !state.conversation(q.conversation_id)) {
    throw new BridgeError(404, 'conversation_not_found', `No conversation ${q.conversation_id}.`);
  }
  if (q.message_id !== undefined) {
    const message = state.message(q.message_id);
    // A message of another conversation is not found where the caller looked for it.
    if (!message || (q.conversation_id !== undefined && message.conversation_id !== q.conversation_id)) {
      throw new BridgeError(404, 'message_not_found', `No message ${q.message_id}${q.conversation_id === undefined ? '' : ` in ${q.conversation_id}`}.`);
    }
  }
  const items = state.world.files
    .map((f) => f.meta)
    .filter((f) => (q.conversation_id === undefined || f.conversation_id === q.conversation_id) && (q.message_id === undefined || f.message_id === q.message_id));
  return page(items, {
    query: ['files', q.conversation_id ?? null, q.message_id ?? null],
    cursor: q.cursor,
    limit: q.limit,
    key: (f) => [f.created_at, f.file_id],
    order: descending,
  });
}

export function fileContent(state: SimState, fileId: string): StoredFile {
  const file = state.file(fileId);
  if (!file) throw new BridgeError(404, 'file_not_found', `No file ${fileId}.`);
  return file;
}

/** One object by its id, whatever its state (an inactive contact, an archived group): the caller decides what that means. */
export function getContact(state: SimState, id: string): BridgeContact {
  const found = state.contact(id);
  if (!found) throw new BridgeError(404, 'contact_not_found', `No contact ${id}.`);
  return found;
}

export function getGroup(state: SimState, id: string): BridgeGroup {
  const found = state.group(id);
  if (!found) throw new BridgeError(404, 'group_not_found', `No group ${id}.`);
  return found;
}

export function getConversation(state: SimState, id: string): BridgeConversation {
  const found = state.conversation(id);
  if (!found) throw new BridgeError(404, 'conversation_not_found', `No conversation ${id}.`);
  return found;
}
