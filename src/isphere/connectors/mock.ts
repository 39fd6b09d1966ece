import { defaultSeed } from '../bridgeSim/defaultSeed';
import { listContacts, listGroups } from '../bridgeSim/reads';
import { SimState } from '../bridgeSim/state';
import type { SimSeed } from '../bridgeSim/types';
import { contactRecord, groupRecord } from './records';
import type { Capability, ContactRecord, ContactSearch, Connector, GroupRecord, GroupSearch, Page } from './types';

/**
 * Seeded fixture data in this process (the bridge simulator's world, read
 * without HTTP). Only an operator turns it on (`DIPPER_ISPHERE_CONNECTOR=mock`),
 * and every record says `source: "mock"`, so nothing it returns can pass
 * for a real client's data.
 */
export class MockConnector implements Connector {
  readonly name = 'mock' as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(['search_contacts', 'search_groups']);
  private readonly state: SimState;

  constructor(seed: SimSeed = defaultSeed()) {
    this.state = new SimState(seed, true);
  }

  async searchContacts(q: ContactSearch): Promise<Page<ContactRecord>> {
    const page = listContacts(this.state, { query: q.query, include_inactive: q.include_inactive ? 'true' : 'false', limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((c) => contactRecord(c, this.name, q.query)), next_cursor: page.next_cursor };
  }

  async searchGroups(q: GroupSearch): Promise<Page<GroupRecord>> {
    const page = listGroups(this.state, { query: q.query, include_archived: q.include_archived ? 'true' : 'false', limit: q.limit, cursor: q.cursor });
    return { items: page.items.map((g) => groupRecord(g, this.name, q.query)), next_cursor: page.next_cursor };
  }
}
