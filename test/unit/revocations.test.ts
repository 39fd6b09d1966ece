import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { SqliteRevokedTokens } from '../../src/common/stores/revokedTokens';
import { RevocationView, type RevocationSource } from '../../src/gateway/revocations';
import { loadConfig } from '../../src/config';
import { tokenRegistryQueue, type RevocationsView } from '../../src/common/pure/revocations';

/**
 * A replica's view of the revocation list against a source whose answers
 * the test releases by hand: a slow answer, a missing one, a revocation.
 */
class HeldSource implements RevocationSource {
  asked = 0;
  private pending: ((view: RevocationsView) => void)[] = [];
  view: RevocationsView = { version: 0, entries: [] };

  since(): Promise<RevocationsView> {
    this.asked++;
    return new Promise((resolve) => this.pending.push(resolve));
  }

  answer(): void {
    const waiting = this.pending;
    this.pending = [];
    for (const resolve of waiting) resolve(this.view);
  }
}

const claims = { run_id: 'run_a', agent_id: 'ag_a', gen: 1, exp: Math.floor(Date.now() / 1000) + 600 };
const log = pino({ level: 'silent' });
const views: RevocationView[] = [];
afterEach(() => views.splice(0).forEach((v) => v.stop()));
// The shared table, as a gateway opens it (the events file of a data folder of the test's own).
const eventsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-revocations-')), 'events.db');
const table = new SqliteRevokedTokens(eventsFile);
afterAll(() => table.close());

function viewOf(source: RevocationSource, waitMs: number, store: SqliteRevokedTokens = table): RevocationView {
  const view = new RevocationView(source, { refreshMs: 50, waitMs, tokenTtlSeconds: 600 }, log, store);
  views.push(view);
  return view;
}

/** A registry that answers at once, with nothing revoked: the replica's own list is fresh and knows of nothing. */
const emptyRegistry: RevocationSource = { since: async () => ({ version: 0, entries: [] }) };

it("refuses a token the shared table holds revoked at once, before the replica's own list has heard of it", async () => {
  const view = viewOf(emptyRegistry, 0);
  await view.start();
  const token = { ...claims, run_id: 'run_table' };
  expect(await view.check(token)).toBe('valid');
  // Written by another process (the worker, another replica) on the same file.
  const writer = new SqliteRevokedTokens(eventsFile);
  await writer.record({ runId: 'run_table', agentId: 'ag_a', belowGen: 2, at: Date.now() }, 0);
  expect(view.listedRevoked(token)).toBe(false);
  expect(await view.check(token)).toBe('revoked');
  expect(await view.check({ ...token, gen: 2 })).toBe('valid');
  await writer.record({ runId: 'run_table', at: Date.now() }, 0);
  expect(await view.check({ ...token, gen: 2 })).toBe('revoked');
  await writer.close();
});

it('fails closed when the shared table cannot be read', async () => {
  const broken = new SqliteRevokedTokens(eventsFile);
  await broken.close();
  const view = viewOf(emptyRegistry, 0, broken);
  await view.start();
  expect(view.listedRevoked(claims)).toBe(false);
  expect(await view.check(claims)).toBe('unknown');
});

it('lets the table decide while the copy of the registry is stale or never answered', async () => {
  const source = new HeldSource();
  const view = viewOf(source, 5000);
  void view.start();
  // The registry has not answered at all (a busy worker): the table, readable and holding nothing, decides at once.
  expect(await view.check(claims)).toBe('valid');
  expect(source.asked).toBe(1);
  const writer = new SqliteRevokedTokens(eventsFile);
  await writer.record({ runId: claims.run_id, agentId: claims.agent_id, belowGen: 2, at: Date.now() }, 0);
  expect(await view.check(claims)).toBe('revoked');
  expect(await view.check({ ...claims, gen: 2 })).toBe('valid');
  await writer.close();
});

it("refuses what the registry's copy holds revoked without reading the table, however old the copy", async () => {
  const source = new HeldSource();
  const broken = new SqliteRevokedTokens(eventsFile);
  await broken.close();
  const view = viewOf(source, 0, broken);
  const starting = view.start();
  source.view = { version: 1, entries: [{ key: 'run_a/ag_a', below: 2, at: Date.now() }] };
  source.answer();
  await starting;
  view.stop();
  // The table cannot be read, so only the fast path can have said it.
  expect(await view.check(claims)).toBe('revoked');
  expect(await view.check({ ...claims, gen: 2 })).toBe('unknown');
});

it("keeps the registry's queue apart from every queue a deployment may be given", () => {
  // Once `<queue>-tokens`: the stack named `dipper-tokens` had its run workflows taken by another stack's registry worker.
  for (const queue of ['dipper', 'dipper-tokens', 'team.a_1']) {
    const registry = tokenRegistryQueue(loadConfig({ DIPPER_TASK_QUEUE: queue }).temporal.taskQueue);
    expect(() => loadConfig({ DIPPER_TASK_QUEUE: registry })).toThrow(/DIPPER_TASK_QUEUE must be/);
  }
  expect(() => loadConfig({ DIPPER_TASK_QUEUE: '' })).toThrow(/DIPPER_TASK_QUEUE must be/);
});
