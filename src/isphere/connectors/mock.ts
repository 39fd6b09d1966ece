import { ConnectorError } from '../../common/isphere/errors';
import { defaultSeed } from '../bridgeSim/defaultSeed';
import { BridgeError } from '../bridgeSim/errors';
import { getContact, getConversation, getGroup, listContacts, listConversations, listFiles, listGroups, listMessages } from '../bridgeSim/reads';
import { SimState } from '../bridgeSim/state';
import type { SimSeed } from '../bridgeSim/types';
import { contactRecord, fileRecord, groupRecord, messageRecord } from './records';
import type {
  Capability,
  ContactRecord,
  ContactSearch,
  Connector,
  ConversationRecord,
  ConversationSearch,
  FileList,
  FileRecord,
  GroupRecord,
  GroupSearch,
  MessageRead,
  MessageRecord,
  Page,
} from './types';

/**
 * Seeded fixture data in this process (the bridge simulator's world, read
 * without HTTP). Only an operator turns it on (`DIPPER_ISPHERE_CONNECTOR=mock`),
 * and every record says `source: "mock"`, so nothing it returns can pass
 * for a real client's data. It lists files but downloads none.
 */
export class MockConnector implements Connector {
  readonly name = 'mock' as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>([
    'search_contacts',
    'search_groups',
    'find_conversations',
    'read_messages',
    'list_files',
    'resolve_targets',
  ]);
  private readonly state: SimState;

  constructor(seed: SimSeed = defaultSeed()) {
    this.state = new SimState(seed, true);
  }

  async searchContacts(q: ContactSearch): Promise<Page<ContactRecord>> {
    const page = simRead(() => listContacts(this.state, { query: q.query, include_inactive: q.include_inactive ? 'true' : 'false', limit: q.limit, cursor: q.cursor }));
    return { items: page.items.map((c) => contactRecord(c, this.name, q.query)), next_cursor: page.next_cursor };
  }

  async searchGroups(q: GroupSearch): Promise<Page<GroupRecord>> {
    const page = simRead(() => listGroups(this.state, { query: q.query, include_archived: q.include_archived ? 'true' : 'false', limit: q.limit, cursor: q.cursor }));
    return { items: page.items.map((g) => groupRecord(g, this.name, q.query)), next_cursor: page.next_cursor };
  }

  async findConversations(q: ConversationSearch): Promise<Page<ConversationRecord>> {
    return simRead(() => listConversations(this.state, { query: q.query, conversation_type: q.conversation_type, limit: q.limit, cursor: q.cursor }));
  }

  async contact(id: string) {
    const c = simRead(() => getContact(this.state, id));
    return { contact_id: c.contact_id, display_name: c.display_name, department: c.department, account: c.account, title: c.title, active: c.active };
  }

  async group(id: string) {
    const g = simRead(() => getGroup(this.state, id));
    return { group_id: g.group_id, display_name: g.display_name, member_count: g.member_count, owner_ref: g.owner_ref, archived: g.archived };
  }

  async conversation(id: string): Promise<ConversationRecord> {
    return simRead(() => getConversation(this.state, id));
  }

  async readMessages(q: MessageRead): Promise<Page<MessageRecord>> {
    const page = simRead(() => listMessages(this.state, q.conversation_id, { since: q.since, limit: q.limit, cursor: q.cursor }));
    return { items: page.items.map((m) => messageRecord(m, this.name, false)), next_cursor: page.next_cursor };
  }

  async listFiles(q: FileList): Promise<Page<FileRecord>> {
    const page = simRead(() => listFiles(this.state, { conversation_id: q.conversation_id, message_id: q.message_id, limit: q.limit, cursor: q.cursor }));
    return { items: page.items.map((f) => fileRecord(f, this.name, false)), next_cursor: page.next_cursor };
  }
}

/** The simulator's refusals in the contract's codes, as the bridge client would map them over HTTP. */
function simRead<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof BridgeError)) throw err;
    if (err.status === 404) throw new ConnectorError('TARGET_NOT_FOUND', 'No such contact, group, conversation, message or file.', false);
    if (err.status === 400) throw new ConnectorError('INVALID_ARGUMENT', 'The cursor does not belong to this query; start again without it.', false, { field: 'cursor' });
    throw new ConnectorError('CONNECTOR_FAILED', 'The mock source failed.', false);
  }
}
