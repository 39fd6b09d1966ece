import type { BridgeClient } from '../../common/isphere/bridgeClient';
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

/** The bridge connector: the iSphere bridge protocol (docs/isphere-bridge.md) over HTTP. */
export class BridgeConnector implements Connector {
  readonly name = 'bridge' as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>([
    'search_contacts',
    'search_groups',
    'find_conversations',
    'read_messages',
    'list_files',
    'resolve_targets',
  ]);

  constructor(private readonly client: BridgeClient) {}

  async searchContacts(q: ContactSearch): Promise<Page<ContactRecord>> {
    const page = await this.client.contacts({ query: q.query, include_inactive: q.include_inactive, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((c) => contactRecord(c, this.name, q.query)), next_cursor: page.next_cursor };
  }

  async searchGroups(q: GroupSearch): Promise<Page<GroupRecord>> {
    const page = await this.client.groups({ query: q.query, include_archived: q.include_archived, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((g) => groupRecord(g, this.name, q.query)), next_cursor: page.next_cursor };
  }

  async findConversations(q: ConversationSearch): Promise<Page<ConversationRecord>> {
    const page = await this.client.conversations({ query: q.query, conversation_type: q.conversation_type, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map(conversationOf), next_cursor: page.next_cursor };
  }

  async contact(id: string) {
    const c = await this.client.contact(id);
    return { contact_id: c.contact_id, display_name: c.display_name, department: c.department, account: c.account, title: c.title, active: c.active };
  }

  async group(id: string) {
    const g = await this.client.group(id);
    return { group_id: g.group_id, display_name: g.display_name, member_count: g.member_count, owner_ref: g.owner_ref, archived: g.archived };
  }

  async conversation(id: string): Promise<ConversationRecord> {
    return conversationOf(await this.client.conversation(id));
  }

  async readMessages(q: MessageRead): Promise<Page<MessageRecord>> {
    const page = await this.client.messages(q.conversation_id, { since: q.since, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((m) => messageRecord(m, this.name, true)), next_cursor: page.next_cursor };
  }

  async listFiles(q: FileList): Promise<Page<FileRecord>> {
    const page = await this.client.files({ conversation_id: q.conversation_id, message_id: q.message_id, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((f) => fileRecord(f, this.name, true)), next_cursor: page.next_cursor };
  }
}

const conversationOf = (c: ConversationRecord): ConversationRecord => ({
  conversation_id: c.conversation_id,
  conversation_type: c.conversation_type,
  display_name: c.display_name,
  peer_id: c.peer_id,
});
