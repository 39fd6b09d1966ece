import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteInboxWakes } from '../../src/common/stores/inboxWakes';

/**
 * Wakes between processes on one host: a table in the events file and a
 * poke on the loopback. Two instances on one file stand for a worker and a
 * gateway. The listeners here read the table on their own only every ten
 * minutes, so a wake heard sooner was pushed.
 */
const TEN_MINUTES = 600_000;
let dir: string;
const opened: SqliteInboxWakes[] = [];
const open = (backstopMs = TEN_MINUTES) => {
  const wakes = new SqliteInboxWakes(path.join(dir, 'events.db'), backstopMs);
  opened.push(wakes);
  return wakes;
};

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-wakes-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((w) => w.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the first `n` keys heard. */
function heard(n: number): { keys: string[]; all: Promise<string[]>; onWake: (key: string) => void } {
  const keys: string[] = [];
  let done: (keys: string[]) => void = () => undefined;
  const all = new Promise<string[]>((resolve) => (done = resolve));
  return {
    keys,
    all,
    onWake: (key) => {
      keys.push(key);
      if (keys.length === n) done(keys);
    },
  };
}

it('pushes a wake to every listening gateway at once, never back to its own origin', async () => {
  const worker = open();
  const [a, b] = [heard(2), heard(2)];
  const stopA = await open().listen('gateway-a', a.onWake);
  const stopB = await open().listen('gateway-b', b.onWake);
  await worker.publish('worker', ['run_1/ag_x', 'run_1/ag_y']);
  expect(await a.all).toEqual(['run_1/ag_x', 'run_1/ag_y']);
  expect(await b.all).toEqual(['run_1/ag_x', 'run_1/ag_y']);
  // A gateway's own publication is not echoed to it, but reaches the other.
  const more = heard(1);
  const stopC = await open().listen('gateway-c', more.onWake);
  await open().publish('gateway-a', ['run_1/ag_z']);
  expect(await more.all).toEqual(['run_1/ag_z']);
  expect(a.keys).toEqual(['run_1/ag_x', 'run_1/ag_y']);
  await Promise.all([stopA(), stopB(), stopC()]);
});

it('hears a wake whose poke never came at its backstop read, and a stopped listener is no longer poked', async () => {
  const file = path.join(dir, 'events.db');
  const slow = heard(1);
  const stop = await open(50).listen('gateway-a', slow.onWake);
  // A row written without a poke (as by a publisher that died between the two).
  const Database = (await import('better-sqlite3')).default;
  const raw = new Database(file);
  raw.prepare('INSERT INTO inbox_wakes (origin, key, ts) VALUES (?, ?, ?)').run('worker', 'run_1/ag_late', Date.now());
  expect(await slow.all).toEqual(['run_1/ag_late']);
  expect(raw.prepare('SELECT origin FROM inbox_wake_listeners').all()).toEqual([{ origin: 'gateway-a' }]);
  await stop();
  expect(raw.prepare('SELECT origin FROM inbox_wake_listeners').all()).toEqual([]);
  raw.close();
});
