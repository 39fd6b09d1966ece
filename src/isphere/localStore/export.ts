import Database from 'better-sqlite3';
import fs from 'node:fs';
import { worldFromSeed } from '../bridgeSim/world';
import type { SimSeed } from '../bridgeSim/types';
import { STORE_FORMAT, STORE_SCHEMA, STORE_VERSION } from './schema';

/**
 * Writes a local store from a simulator seed, with the simulator's IDs, so
 * both sources describe one world. For tests and the demo: a real export
 * comes from whatever tool reads the real client.
 */
export function exportSeed(seed: SimSeed, file: string): void {
  fs.rmSync(file, { force: true });
  const db = new Database(file);
  try {
    db.exec(STORE_SCHEMA);
    const world = worldFromSeed(seed);
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    const contact = db.prepare('INSERT INTO contacts VALUES (@contact_id, @display_name, @account, @department, @title, @active, @raw_ref)');
    const group = db.prepare('INSERT INTO groups VALUES (@group_id, @display_name, @member_count, @owner_ref, @archived, @raw_ref)');
    db.transaction(() => {
      meta.run('format', STORE_FORMAT);
      meta.run('version', STORE_VERSION);
      for (const c of world.contacts) contact.run({ ...c, active: c.active ? 1 : 0 });
      for (const g of world.groups) group.run({ ...g, archived: g.archived ? 1 : 0 });
    })();
  } finally {
    db.close();
  }
}
