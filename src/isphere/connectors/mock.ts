import { defaultSeed } from '../bridgeSim/defaultSeed';
import { listContacts, listGroups } from '../bridgeSim/reads';
import { SimState } from '../bridgeSim/state';
import type { SimSeed } from '../bridgeSim/types';
import { matchConfidence } from './confidence';
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
    const page = listGroups(this.state, { query: q.query, include_archived: q.include_archived ? 'true' : 'false', limit: q.limit, cursor: q.cursor });
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
