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
    const conversation = db.prepare('INSERT INTO conversations VALUES (@conversation_id, @conversation_type, @display_name, @peer_id)');
    const message = db.prepare(
      'INSERT INTO messages VALUES (@message_id, @conversation_id, @sender_id, @sender_name, @content_type, @content_text, @created_at, @received_at, @raw_ref)',
    );
    const attachment = db.prepare('INSERT INTO attachments VALUES (@file_id, @message_id, @file_name, @size_bytes, @mime_type, @sha256)');
    db.transaction(() => {
      meta.run('format', STORE_FORMAT);
      meta.run('version', STORE_VERSION);
      for (const c of world.contacts) contact.run({ ...c, active: c.active ? 1 : 0 });
      for (const g of world.groups) group.run({ ...g, archived: g.archived ? 1 : 0 });
      for (const c of world.conversations) conversation.run(c);
      for (const { attachments: _files, ...m } of world.messages) message.run(m);
      for (const { meta } of world.files) attachment.run({ file_id: meta.file_id, message_id: meta.message_id, file_name: meta.file_name, size_bytes: meta.size_bytes, mime_type: meta.mime_type, sha256: meta.sha256 });
    })();
  } finally {
    db.close();
  }
}
