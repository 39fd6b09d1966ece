import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStores, type Stores } from '../../src/common/stores';

/**
 * The revocations table behaves the same on every backend: SQLite files
 * always, PostgreSQL when DIPPER_TEST_DATABASE_URL names a server.
 */
const pgUrl = process.env.DIPPER_TEST_DATABASE_URL;
type Where = { dataDir: string; databaseUrl?: string };
const backends: [string, () => Where][] = [
  ['sqlite', () => ({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-revoked-')) })],
  ...(pgUrl ? [['postgresql', () => ({ dataDir: '/nonexistent', databaseUrl: pgUrl })] as [string, () => Where]] : []),
];
const runOf = () => `run_${Math.random().toString(16).slice(2, 14).padEnd(12, '0')}`;

describe.each(backends)('%s', (_name, place) => {
  let writer: Stores;
  let reader: Stores;
  beforeAll(async () => {
    const where = place();
    writer = await openStores(where);
    // A second opening stands for another replica, on another process or host.
    reader = await openStores(where);
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  it("is read by another opening as soon as it is written, and only ever widens", async () => {
    const runId = runOf();
    expect(await reader.revoked.below(runId, 'ag_a')).toBe(0);
    await writer.revoked.record({ runId, agentId: 'ag_a', belowGen: 3, at: Date.now() }, 0);
    expect(await reader.revoked.below(runId, 'ag_a')).toBe(3);
    expect(await reader.revoked.below(runId, 'ag_b')).toBe(0);
    // A late, older relaunch's revocation changes nothing.
    await writer.revoked.record({ runId, agentId: 'ag_a', belowGen: 2, at: Date.now() }, 0);
    expect(await reader.revoked.below(runId, 'ag_a')).toBe(3);
    // The agent's end, then the whole run: every generation, every agent.
    await writer.revoked.record({ runId, agentId: 'ag_a', at: Date.now() }, 0);
    expect(await reader.revoked.below(runId, 'ag_a')).toBe(Number.MAX_SAFE_INTEGER);
    await writer.revoked.record({ runId, at: Date.now() }, 0);
    expect(await reader.revoked.below(runId, 'ag_b')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('drops entries older than every token they cover', async () => {
    const [old, recent] = [runOf(), runOf()];
    const now = Date.now();
    await writer.revoked.record({ runId: old, at: now - 10_000 }, 0);
    await writer.revoked.record({ runId: recent, at: now }, now - 5000);
    expect(await reader.revoked.below(old, 'ag_a')).toBe(0);
    expect(await reader.revoked.below(recent, 'ag_a')).toBe(Number.MAX_SAFE_INTEGER);
  });
});
