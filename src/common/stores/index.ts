import type { DipperConfig } from '../../config';
import { paths } from '../../paths';
import { SqliteContentStore, type ContentStore } from './contentStore';
import { SqliteEventStore, type EventStore } from './eventStore';
import { SqliteInboxWakes, type InboxWakes } from './inboxWakes';
import { openPostgres } from './postgres';
import { SqliteRevokedTokens, type RevokedTokens } from './revokedTokens';

export interface Stores {
  events: EventStore;
  content: ContentStore;
  /** Inbox wakes between processes: a table of the events file, or PostgreSQL's LISTEN/NOTIFY. */
  wakes: InboxWakes;
  /** Token revocations every replica reads at each check: a table of the events file, or of PostgreSQL. */
  revoked: RevokedTokens;
  close(): Promise<void>;
}

/** Where the event log and the content store live: PostgreSQL with DIPPER_DATABASE_URL, else SQLite files in the data folder (one host). */
export async function openStores(config: Pick<DipperConfig, 'dataDir' | 'databaseUrl'>): Promise<Stores> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl);
  const events = new SqliteEventStore(paths.events(config.dataDir));
  const content = new SqliteContentStore(paths.content(config.dataDir));
  const wakes = new SqliteInboxWakes(paths.events(config.dataDir));
  const revoked = new SqliteRevokedTokens(paths.events(config.dataDir));
  return {
    events,
    content,
    wakes,
    revoked,
    close: async () => {
      await events.close();
      await content.close();
      await wakes.close();
      await revoked.close();
    },
  };
}
