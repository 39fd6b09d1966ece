import { Client, Connection } from '@temporalio/client';
import { closeAll, env, operator, spawn, startRun, task } from '../support/team';
import { eventually } from '../support/clients';
import { leftRunning, untilNothingRunning } from '../support/ended';

/** Runs end on an operator's word, and the run list shows them. */
let connection: Connection;
let client: Client;

beforeAll(async () => {
  connection = await Connection.connect({ address: env.temporalAddress });
  client = new Client({ connection, namespace: env.namespace });
});
afterAll(async () => {
  await closeAll();
  await connection.close();
});

async function threeLevels() {
  const run = await startRun(undefined, 'Three levels, then stop.');
  await run.root.ok('declare_plan', { tasks: [task('lead', [], 'lead')] });
  const lead = await spawn(run.root, run.runId, 'lead');
  await lead.client.ok('declare_plan', { tasks: [task('leaf')] });
  const leaf = await spawn(lead.client, run.runId, 'leaf');
  return { ...run, lead, leaf };
}

describe('POST /api/runs/:run/cancel', () => {
  it('ends a three-level run: every agent terminated, nothing left running, events say who and why', async () => {
    const run = await threeLevels();
    expect(await leftRunning(client, env.dataDir, run.runId)).toHaveLength(4);
    const res = await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: 'Wrong task.' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ run_id: run.runId, status: 'cancelled' });
    await untilNothingRunning(client, env.dataDir, run.runId);

    const events = await operator.events(run.runId);
    expect(events.filter((e) => e.type === 'run_cancelled').map((e) => e.data)).toEqual([{ by: 'operator', reason: 'Wrong task.' }]);
    expect(events.some((e) => e.type === 'run_completed')).toBe(false);
    const stopped = events.filter((e) => e.type === 'agent_completed').map((e) => e.agent_id);
    expect(stopped.sort()).toEqual([run.rootId, run.lead.agentId, run.leaf.agentId].sort());
    // Every agent's token is refused now.
    for (const member of [run.root, run.lead.client, run.leaf.client]) {
      await eventually(async () => ((await member.inbox(0, 0).catch((e: Error) => e.message)) as string).toString().includes('token_revoked') || undefined);
    }
    const view = await operator.request('GET', `/runs/${run.runId}`);
    expect(view.json.status).toBe('cancelled');
  });

  it('answers the same for a run already ended, and 404 for one that never was', async () => {
    const run = await startRun(undefined, 'Cancel me twice.');
    await operator.request('POST', `/runs/${run.runId}/cancel`);
    await untilNothingRunning(client, env.dataDir, run.runId);
    const again = await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: 'again' });
    expect(again.json).toEqual({ run_id: run.runId, status: 'cancelled' });
    expect((await operator.request('POST', '/runs/run_000000000000/cancel')).status).toBe(404);
    expect((await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: '' })).json.error).toMatchObject({ code: 'invalid_input', field: 'reason' });
  });
});

describe('GET /api/runs', () => {
  it('lists runs newest first with status, task, root, age and agent count, filtered by status', async () => {
    const ended = await threeLevels();
    await operator.request('POST', `/runs/${ended.runId}/cancel`);
    await untilNothingRunning(client, env.dataDir, ended.runId);
    const live = await startRun(undefined, 'Still going.');
    const row = async (status: string, runId: string) =>
      eventually(async () => {
        const res = await operator.request('GET', `/runs?status=${status}&page_size=200`);
        return (res.json.runs as { run_id: string }[]).find((r) => r.run_id === runId) as Record<string, unknown> | undefined;
      });
    expect(await row('active', live.runId)).toMatchObject({ status: 'active', task: 'Still going.', root_agent_id: live.rootId, ended_at: null, agent_count: 1 });
    const cancelled = await row('cancelled', ended.runId);
    expect(cancelled).toMatchObject({ status: 'cancelled', task: 'Three levels, then stop.', root_agent_id: ended.rootId, agent_count: 3 });
    expect(typeof cancelled.age_seconds).toBe('number');
    expect(Date.parse(cancelled.ended_at as string)).toBeGreaterThanOrEqual(Date.parse(cancelled.started_at as string));
    // A filter keeps to its status.
    const active = (await operator.request('GET', '/runs?status=active&page_size=200')).json.runs as { run_id: string; status: string }[];
    expect(active.every((r) => r.status === 'active')).toBe(true);
    expect(active.some((r) => r.run_id === ended.runId)).toBe(false);
  });

  it('pages: each page is new, the pages cover the list, a bad token is the caller\'s error', async () => {
    for (let i = 0; i < 3; i++) await startRun(undefined, `Page filler ${i}.`);
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const res: { json: { runs: { run_id: string }[]; next_page_token: string | null } } = await operator.request('GET', `/runs?page_size=2${token ? `&page_token=${token}` : ''}`);
      expect(res.json.runs.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.runs.map((r) => r.run_id));
      token = res.json.next_page_token;
      pages++;
    } while (token && pages < 3);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect((await operator.request('GET', '/runs?page_size=500')).json.error).toMatchObject({ code: 'invalid_input', field: 'page_size' });
    expect((await operator.request('GET', '/runs?status=sleeping')).json.error).toMatchObject({ code: 'invalid_input', field: 'status' });
  });
});
