import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BridgeClient } from '../../src/common/isphere/bridgeClient';
import { failureOf } from './failure';
import { defaultSeed, startBridgeSim } from '../../src/isphere/bridgeSim';
import { BridgeConnector, LocalReadonlyConnector, MockConnector, Sources } from '../../src/isphere/connectors';
import { exportSeed } from '../../src/isphere/localStore/export';

/** The local_readonly connector over a plaintext SQLite export built from the simulator's seed. */
let dir: string;
let store: string;
let local: LocalReadonlyConnector;
const opened: LocalReadonlyConnector[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'isphere-store-'));
  store = path.join(dir, 'export.sqlite');
  exportSeed(defaultSeed(), store);
  local = new LocalReadonlyConnector(store);
  opened.push(local);
});
afterAll(() => {
  for (const c of opened) c.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const connectorFor = (file: string) => {
  const c = new LocalReadonlyConnector(file);
  opened.push(c);
  return c;
};
const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

it('answers the same people as the seeded world, labelled local_readonly', async () => {
  const q = { query: 'li wei', limit: 20, include_inactive: false };
  const fromStore = await local.searchContacts(q);
  const fromSeed = await new MockConnector().searchContacts(q);
  expect(fromStore.items.map((c) => [c.contact_id, c.display_name, c.account, c.confidence]).sort()).toEqual(
    fromSeed.items.map((c) => [c.contact_id, c.display_name, c.account, c.confidence]).sort(),
  );
  expect(new Set(fromStore.items.map((c) => c.source))).toEqual(new Set(['local_readonly']));
  const zhang = await local.searchContacts({ query: 'zhang wei', limit: 20, include_inactive: true });
  expect(zhang.items.map((c) => c.account).sort()).toEqual(['zhang.wei', 'zhang.wei.old']);
  expect((await local.searchContacts({ query: 'zhang wei', limit: 20, include_inactive: false })).items.map((c) => c.account)).toEqual(['zhang.wei']);
});

it('pages through every contact once in name order, and refuses a cursor from another search', async () => {
  const seen: string[] = [];
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await local.searchContacts({ query: '', limit: 9, include_inactive: true, cursor });
    seen.push(...page.items.map((c) => c.contact_id));
    names.push(...page.items.map((c) => c.display_name));
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor);
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.length).toBe(defaultSeed().contacts.length);
  expect(pages).toBe(Math.ceil(seen.length / 9));
  expect(names).toEqual([...names].sort());

  const first = await local.searchContacts({ query: '', limit: 2, include_inactive: true });
  const err = await failureOf(local.searchContacts({ query: 'li', limit: 2, include_inactive: true, cursor: first.next_cursor! }));
  expect([err.code, err.details.field]).toEqual(['INVALID_ARGUMENT', 'cursor']);
  expect((await failureOf(local.searchContacts({ query: '', limit: 2, include_inactive: true, cursor: 'not-a-cursor' }))).code).toBe('INVALID_ARGUMENT');
});

it('searches groups, leaving archived ones out unless asked', async () => {
  expect((await local.searchGroups({ query: 'finance', limit: 10, include_archived: false })).items.map((g) => [g.display_name, g.confidence])).toEqual([
    ['Finance Team', 0.9],
    ['Finance Team (Shanghai)', 0.9],
  ]);
  expect((await local.searchGroups({ query: 'office', limit: 10, include_archived: false })).items).toEqual([]);
  const archived = { query: 'office', limit: 10, include_archived: true };
  const strip = (g: { source: string }) => ({ ...g, source: 'either' });
  expect((await local.searchGroups(archived)).items.map(strip)).toEqual((await new MockConnector().searchGroups(archived)).items.map(strip));
});

it('never writes: the store is byte for byte the same after reads, with no journal beside it', async () => {
  const before = digest(store);
  const mtime = fs.statSync(store).mtimeMs;
  for (let i = 0; i < 5; i++) await local.searchContacts({ query: 'wei', limit: 3, include_inactive: false });
  expect(digest(store)).toBe(before);
  expect(fs.statSync(store).mtimeMs).toBe(mtime);
  expect(fs.readdirSync(dir).sort()).toEqual(['export.sqlite']);
});

it('a store that is missing, encrypted-looking, or of another format is SOURCE_UNAVAILABLE', async () => {
  const search = (file: string) => failureOf(connectorFor(file).searchContacts({ query: 'li', limit: 5, include_inactive: false }));
  expect((await search(path.join(dir, 'nowhere.sqlite'))).code).toBe('SOURCE_UNAVAILABLE');

  const scrambled = path.join(dir, 'scrambled.db');
  fs.writeFileSync(scrambled, createHash('sha512').update('not a plain database').digest());
  const err = await search(scrambled);
  expect([err.code, err.message]).toEqual(['SOURCE_UNAVAILABLE', expect.stringContaining('never decrypts')]);

  const other = path.join(dir, 'other.sqlite');
  const db = new Database(other);
  db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('format', 'something-else'), ('version', '1');");
  db.close();
  expect((await search(other)).code).toBe('SOURCE_UNAVAILABLE');
  fs.rmSync(scrambled);
  fs.rmSync(other);
});

it('auto reads the local store when the bridge is not there, and reports the bridge it passed', async () => {
  const closed = await startBridgeSim({ bridgeToken: 'b', controlToken: 'c' });
  await closed.close();
  const gone = new BridgeConnector(new BridgeClient({ baseUrl: closed.url, token: 'unused', timeoutMs: 2000 }));
  const got = await new Sources([gone, local]).read('auto', 'search_groups', (c) => c.searchGroups({ query: 'lunch', limit: 5, include_archived: false }));
  expect([got.source, got.fallbacks, got.value.items.map((g) => g.display_name)]).toEqual(['local_readonly', [{ source: 'bridge', code: 'SOURCE_UNAVAILABLE' }], ['Lunch Club']]);
});

/** Every page of a connector list. */
async function everything<T>(read: (cursor?: string) => Promise<{ items: T[]; next_cursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    out.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

it('reads conversations, messages (newest first, since inclusive) and files as the seeded world has them', async () => {
  const mock = new MockConnector();
  expect(await local.conversation('conv_g_0001')).toEqual(await mock.conversation('conv_g_0001'));
  expect((await local.findConversations({ query: 'finance', limit: 50 })).items.map((c) => c.conversation_id)).toEqual(['conv_g_0001', 'conv_g_0002']);
  const fromStore = await everything((cursor) => local.readMessages({ conversation_id: 'conv_g_0003', limit: 7, cursor }));
  const fromSeed = await everything((cursor) => mock.readMessages({ conversation_id: 'conv_g_0003', limit: 7, cursor }));
  expect(fromStore.map((m) => ({ ...m, source: 'x', attachments: m.attachments.map((a) => a.file_id) }))).toEqual(
    fromSeed.map((m) => ({ ...m, source: 'x', attachments: m.attachments.map((a) => a.file_id) })),
  );
  expect(fromStore.every((m) => m.source === 'local_readonly')).toBe(true);
  const since = fromStore[5].created_at!;
  const recent = await local.readMessages({ conversation_id: 'conv_g_0003', since, limit: 200 });
  expect(recent.items.map((m) => m.message_id)).toEqual(fromStore.filter((m) => m.created_at! >= since).map((m) => m.message_id));
  const files = await everything((cursor) => local.listFiles({ limit: 3, cursor }));
  const seedFiles = await everything((cursor) => mock.listFiles({ limit: 50, cursor }));
  expect(files.map((f) => [f.file_id, f.sha256, f.conversation_id])).toEqual(seedFiles.map((f) => [f.file_id, f.sha256, f.conversation_id]));
  expect(files.every((f) => f.download_ref === null)).toBe(true);
  expect((await failureOf(local.readMessages({ conversation_id: 'conv_nope', limit: 5 }))).code).toBe('TARGET_NOT_FOUND');
  expect((await failureOf(local.listFiles({ message_id: 'm_nope', limit: 5 }))).code).toBe('TARGET_NOT_FOUND');
});

it('an export made before messages were in it answers SOURCE_UNAVAILABLE for them, and still its directory', async () => {
  const old = path.join(dir, 'directory-only.sqlite');
  fs.copyFileSync(store, old);
  const db = new Database(old);
  db.exec('DROP TABLE attachments; DROP TABLE messages; DROP TABLE conversations;');
  db.close();
  const c = connectorFor(old);
  expect((await c.searchContacts({ query: 'li wei', limit: 5, include_inactive: false })).items).toHaveLength(2);
  expect((await failureOf(c.readMessages({ conversation_id: 'conv_d_0001', limit: 5 }))).code).toBe('SOURCE_UNAVAILABLE');
});
