import type { BridgeClient } from '../../../activities/isphere/bridgeClient';
import { matchConfidence } from './confidence';
import type { Capability, ContactRecord, ContactSearch, Connector, GroupRecord, GroupSearch, Page } from './types';

/** The bridge connector: the iSphere bridge protocol (docs/isphere-bridge.md) over HTTP. */
export class BridgeConnector implements Connector {
  readonly name = 'bridge' as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(['search_contacts', 'search_groups']);

  constructor(private readonly client: BridgeClient) {}

  async searchContacts(q: ContactSearch): Promise<Page<ContactRecord>> {
    const page = await this.client.contacts({ query: q.query, include_inactive: q.include_inactive, limit: q.limit, cursor: q.cursor });
    return {
      items: page.items.map((c) => ({
        contact_id: c.contact_id,
        display_name: c.display_name,
        account: c.account,
        department: c.department,
        title: c.title,
        source: this.name,
        confidence: matchConfidence(q.query, c.display_name, [c.department, c.title], [c.account]),
        raw_ref: c.raw_ref,
      })),
      next_cursor: page.next_cursor,
    };
  }

  async searchGroups(q: GroupSearch): Promise<Page<GroupRecord>> {
    const page = await this.client.groups({ query: q.query, include_archived: q.include_archived, limit: q.limit, cursor: q.cursor });
    return {
      items: page.items.map((g) => ({
        group_id: g.group_id,
        display_name: g.display_name,
        member_count: g.member_count,
        owner_ref: g.owner_ref,
        source: this.name,
        confidence: matchConfidence(q.query, g.display_name),
        raw_ref: g.raw_ref,
      })),
      next_cursor: page.next_cursor,
    };
  }
}
