import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONTENT_GONE, resolveTexts } from '../../src/common/stores/contentStore';
import { openStores, type Stores } from '../../src/common/stores';
import type { DipperEvent } from '../../src/common/stores/eventStore';

/**
 * The event log and the content store behave the same on every backend:
 * SQLite files (one host) always, PostgreSQL when DIPPER_TEST_DATABASE_URL
 * names a server (CI starts one).
 */
const pgUrl = process.env.DIPPER_TEST_DATABASE_URL;
type Where = { dataDir: string; databaseUrl?: string };
const backends: [string, () => Where][] = [
  ['sqlite', () => ({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-stores-')) })],
  ...(pgUrl ? [['postgresql', () => ({ dataDir: '/nonexistent', databaseUrl: pgUrl })] as [string, () => Where]] : []),
];

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('not within 5 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const runOf = () => `run_${Math.random().toString(16).slice(2, 14).padEnd(12, '0')}`;
const event = (runId: string, n: number, type = 'send_message'): DipperEvent => ({
  event_id: `${runId}-${n}`,
  run_id: runId,
  agent_id: n % 2 ? 'ag_a' : null,
  type,
  ts: 1_796_000_000_000 + n,
  data: { n, text: 'é'.repeat(n) },
});

describe.each(backends)('%s', (_name, place) => {
  let stores: Stores;
  let where: Where;
  beforeAll(async () => {
    where = place();
    stores = await openStores(where);
  });
  afterAll(async () => stores?.close());

  it("carries inbox wakes to another process's listener, except its own origin's", async () => {
    // A second opening of the same place stands for a gateway on another process (or host).
    const gateway = await openStores(where);
    const heard: string[] = [];
    const stop = await gateway.wakes.listen('gateway-1', (key) => heard.push(key));
    try {
      await stores.wakes.publish('gateway-1', ['run_x/ag_own']);
      await stores.wakes.publish('worker', ['run_x/ag_a', 'run_x/ag_b']);
      await waitFor(() => heard.length >= 2);
      await stores.wakes.publish('worker', ['run_x/ag_c']);
      await waitFor(() => heard.length >= 3);
      expect(heard).toEqual(['run_x/ag_a', 'run_x/ag_b', 'run_x/ag_c']);
    } finally {
      await stop();
      await gateway.close();
    }
  });

  it('records each event once, in order, and lists them by run, position and type', async () => {
    const runId = runOf();
    const other = runOf();
    await stores.events.append([event(runId, 1), event(runId, 2, 'status'), event(other, 1)]);
    // An activity that ran twice hands the same events again.
    await stores.events.append([event(runId, 2, 'status'), event(runId, 3)]);
    const all = await stores.events.list(runId);
    expect(all.map((e) => [e.event_id, e.type, e.agent_id, e.ts, e.data])).toEqual([
      [`${runId}-1`, 'send_message', 'ag_a', 1_796_000_000_001, { n: 1, text: 'é' }],
      [`${runId}-2`, 'status', null, 1_796_000_000_002, { n: 2, text: 'éé' }],
      [`${runId}-3`, 'send_message', 'ag_a', 1_796_000_000_003, { n: 3, text: 'ééé' }],
    ]);
    expect(all.every((e, i) => i === 0 || e.seq > all[i - 1].seq)).toBe(true);
    expect((await stores.events.list(runId, { after: all[0].seq, limit: 1 })).map((e) => e.event_id)).toEqual([`${runId}-2`]);
    expect((await stores.events.list(runId, { type: 'send_message' })).map((e) => e.event_id)).toEqual([`${runId}-1`, `${runId}-3`]);
    expect(await stores.events.list(runOf())).toEqual([]);
  });

  it("adds up a run's model usage per agent, from its model.usage events alone", async () => {
    const runId = runOf();
    const usage = (id: string, agent: string, input: number, output: number) => ({ event_id: id, run_id: runId, agent_id: agent, type: 'model.usage', ts: 1, data: { input_tokens: input, output_tokens: output } });
    await stores.events.append([usage(`${runId}-u1`, 'ag_b', 100, 7), usage(`${runId}-u2`, 'ag_a', 5_000_000_000, 1), usage(`${runId}-u3`, 'ag_b', 20, 3), event(runId, 1)]);
    // The same event handed twice (an activity run again) counts once; another run's never.
    await stores.events.append([usage(`${runId}-u1`, 'ag_b', 100, 7), { ...usage(`${runOf()}-x`, 'ag_a', 9, 9), run_id: runOf() }]);
    expect(await stores.events.modelUsage(runId)).toEqual([
      { agent_id: 'ag_a', requests: 1, input_tokens: 5_000_000_000, output_tokens: 1 },
      { agent_id: 'ag_b', requests: 2, input_tokens: 120, output_tokens: 10 },
    ]);
    expect(await stores.events.modelUsage(runOf())).toEqual([]);
  });

  it("grants a run's model claims one at a time across replicas, and turns a settled claim into its usage in one step", async () => {
    const runId = runOf();
    const replica = await openStores(where);
    try {
      const claim = (n: number, at = Date.now()) => ({ claim_id: `${runId}-c${n}`, run_id: runId, agent_id: n % 2 ? 'ag_a' : 'ag_b', tokens: 100, at });
      const seen: Array<{ requests: number; tokens: number }> = [];
      // Room for 3 turns, counting answered and in flight: 20 claims at once through two openings get 3.
      const room = (used: { requests: number }[], held: { requests: number; tokens: number }[]) => {
        seen.push({ requests: held.reduce((n, h) => n + h.requests, 0), tokens: held.reduce((n, h) => n + h.tokens, 0) });
        return [...used, ...held].reduce((n, u) => n + u.requests, 0) >= 3 ? 'full' : null;
      };
      const results = await Promise.all(Array.from({ length: 20 }, (_, n) => (n % 2 ? replica : stores).events.claimModelUse(claim(n), 0, room)));
      expect(results.filter((r) => r === null)).toHaveLength(3);
      expect(seen.at(-1)).toEqual({ requests: 3, tokens: 300 });
      const granted = results.flatMap((r, n) => (r === null ? [n] : []));
      // Settled: one becomes a model.usage event, one is let go unanswered; the third still holds its place.
      const usage = { event_id: `${runId}-c${granted[0]}`, run_id: runId, agent_id: claim(granted[0]).agent_id, type: 'model.usage', ts: 1, data: { input_tokens: 7, output_tokens: 2 } };
      await replica.events.settleModelUse(usage.event_id, usage);
      await stores.events.settleModelUse(`${runId}-c${granted[1]}`, null);
      expect(await stores.events.modelUsage(runId)).toEqual([{ agent_id: usage.agent_id, requests: 1, input_tokens: 7, output_tokens: 2 }]);
      expect(await stores.events.claimModelUse(claim(20), 0, room)).toBeNull();
      expect(await stores.events.claimModelUse(claim(21), 0, room)).toBe('full');
      // A claim whose gateway never settled it counts until it lapses.
      expect(await stores.events.claimModelUse(claim(22), Date.now() + 1, room)).toBeNull();
      expect(seen.at(-1)).toEqual({ requests: 0, tokens: 0 });
    } finally {
      await replica.close();
    }
  });

  it('finds the run of an approval from its request event alone', async () => {
    const runId = runOf();
    const approvalId = `apr_${runId.slice(4)}`;
    const requested = { event_id: `${runId}-a`, run_id: runId, agent_id: 'ag_a', type: 'isphere.approval_requested', ts: 1, data: { approval_id: approvalId, tool: 'isphere_send_message' } };
    // Another kind of event naming it does not count.
    await stores.events.append([{ ...requested, event_id: `${runId}-b`, run_id: runOf(), type: 'isphere.approval_announced', data: { approval_id: `${approvalId}x` } }, requested]);
    expect(await stores.events.runOfApproval(approvalId)).toBe(runId);
    expect(await stores.events.runOfApproval(`${approvalId}x`)).toBeNull();
  });

  it('keeps texts by reference, reads them back, drops them one by one or by run, and counts them', async () => {
    const runId = runOf();
    const long = 'long text '.repeat(500);
    const a = await stores.content.put(runId, long);
    const b = await stores.content.put(runId, 'ü'.repeat(2000));
    expect(a).toEqual({ content_ref: expect.stringMatching(/^ct_[0-9a-f]{32}$/), bytes: 5000 });
    expect(b.bytes).toBe(4000);
    expect(await stores.content.usage(runId)).toEqual({ pieces: 2, bytes: 9000 });
    expect(await stores.content.runs()).toContain(runId);
    expect(await resolveTexts(stores.content, { items: [{ content: a }, { content: 'short' }], summary: { ...a, chars: 4 } })).toEqual({
      items: [{ content: long }, { content: 'short' }],
      summary: 'long…',
    });
    await stores.content.drop([a.content_ref]);
    expect(await resolveTexts(stores.content, [a, b])).toEqual([CONTENT_GONE, 'ü'.repeat(2000)]);
    expect(await stores.content.dropRun(runId)).toBe(1);
    expect(await stores.content.usage(runId)).toEqual({ pieces: 0, bytes: 0 });
    expect(await stores.content.runs()).not.toContain(runId);
  });
});
