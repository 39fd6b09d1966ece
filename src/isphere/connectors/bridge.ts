import type { BridgeClient } from '../../../activities/isphere/bridgeClient';
import { contactRecord, groupRecord } from './records';
import type { Capability, ContactRecord, ContactSearch, Connector, GroupRecord, GroupSearch, Page } from './types';

/** The bridge connector: the iSphere bridge protocol (docs/isphere-bridge.md) over HTTP. */
export class BridgeConnector implements Connector {
  readonly name = 'bridge' as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(['search_contacts', 'search_groups']);

  constructor(private readonly client: BridgeClient) {}

  async searchContacts(q: ContactSearch): Promise<Page<ContactRecord>> {
    const page = await this.client.contacts({ query: q.query, include_inactive: q.include_inactive, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((c) => contactRecord(c, this.name, q.query)), next_cursor: page.next_cursor };
  }

  async searchGroups(q: GroupSearch): Promise<Page<GroupRecord>> {
    const page = await this.client.groups({ query: q.query, include_archived: q.include_archived, limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((g) => groupRecord(g, this.name, q.query)), next_cursor: page.next_cursor };
  }
}
