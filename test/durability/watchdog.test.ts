import { agentWorkflowId } from '../../workflows/ids';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { connectTemporal } from '../support/temporal';
import { failedTasks } from '../support/versions';

/**
 * Watchdog passes A and B on the real dev server, with intervals of one to
 * two seconds set per run. A stack of its own: its gateway marks tool calls
 * every 200 ms (the default is 15 s, far above these intervals), and one
 * test kills its worker.
 */

let stack: Stack;
const clients: AgentClient[] = [];
const afterAllStops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = await startStack('watchdog', 28892, { DIPPER_ACTIVITY_MARK_MS: '200' });
}, 60_000);

afterAll(async () => {
  for (const stop of afterAllStops) await stop();
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
});

/** Connects, again while the gateway cannot yet confirm tokens (a test before this one restarted the worker, and the revocation list with it). */
async function connect(token: string): Promise<AgentClient> {
  const c = await eventually(() => AgentClient.connect(stack.gatewayUrl, token).catch(() => undefined), 20_000, 250);
  clients.push(c);
  return c;
}

async function startRun(limits: Record<string, number>) {
  const res = await stack.operator.request('POST', '/runs', { task: 'Watch the watchdog.', limits });
  if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
  return { runId: res.json.run_id as string, rootId: res.json.root.agent_id as string, root: await connect(res.json.root.agent_token) };
}

/** The root declares a plan of `ids` and spawns each task; the test plays every child. */
/** `joined` runs as each child connects, before the next is spawned: a child's own traffic starts at once. */
/** `absent`: spawned too, but nobody connects as them. */
async function team(limits: Record<string, number>, ids: string[], joined: (id: string, client: AgentClient) => void = () => undefined, absent: string[] = []) {
  const run = await startRun(limits);
  await run.root.ok('declare_plan', { tasks: [...ids, ...absent].map((id) => ({ id, role: `${id}-engineer`, skill: 'worker', task: `Do ${id}.`, depends_on: [] })) });
  const kids: Record<string, { agentId: string; client: AgentClient }> = {};
  const unstarted: Record<string, string> = {};
  for (const id of absent) unstarted[id] = (await run.root.ok('spawn_agent', { task_id: id })).agent_id;
  for (const id of ids) {
    const spawned = await run.root.ok('spawn_agent', { task_id: id });
    const launch = await stack.operator.launch(run.runId, spawned.agent_id);
    kids[id] = { agentId: spawned.agent_id, client: await connect(launch.token) };
    joined(id, kids[id].client);
  }
  return { ...run, kids, unstarted };
}

async function events(runId: string, type: string, pred: (e: any) => boolean = () => true, min = 1, timeoutMs = 30_000): Promise<any[]> {
  try {
    return await eventually(async () => {
      const found = (await stack.operator.events(runId, type)).filter(pred);
      return found.length >= min ? found : undefined;
    }, timeoutMs);
  } catch {
    throw new Error(`no ${min} '${type}' event(s) in ${timeoutMs} ms; ${await whyNot(runId)}`);
  }
}

/** What a failed wait reports: every agent of the run, its workflow's status and failed tasks. */
async function whyNot(runId: string): Promise<string> {
  const { client, close } = await connectTemporal();
  try {
    const agents = (await stack.operator.request('GET', `/runs/${runId}/agents`)).json.agents ?? [];
    const lines = await Promise.all(
      agents.map(async (a: any) => {
        const handle = client.workflow.getHandle(agentWorkflowId(runId, a.agent_id));
        const d = await handle.describe();
        const failed = await failedTasks(client, handle.workflowId, d.runId);
        return `${a.agent_id} ${a.status} workflow ${d.status.name}, ${d.raw.pendingActivities?.length ?? 0} activities pending, failed tasks: ${JSON.stringify(failed)}`;
      }),
    );
    return lines.join('; ');
  } catch (err) {
    return `(could not read the run: ${(err as Error).message})`;
  } finally {
    await close();
  }
}

/** A promise each of `n` callers gets, settled once all `n` have called. */
function meeting(n: number): () => Promise<void> {
  let arrived = 0;
  let all!: () => void;
  const met = new Promise<void>((r) => (all = r));
  return () => {
    if (++arrived === n) all();
    return met;
  };
}

/** A restart of the worker once `n` callers wait for it; each call returns when it is done. */
function restartWhenAllReady(n: number): () => Promise<void> {
  const met = meeting(n);
  let restarted: Promise<void> | undefined;
  return () => {
    const all = met();
    return (restarted ??= all.then(() => stack.restartWorker()));
  };
}

/** Workflow time of an event (ms, or an ISO string from the API). */
const tsOf = (e: any): number => (typeof e.ts === 'number' ? e.ts : Date.parse(e.ts ?? e.time));

/**
 * Workflow time at which an agent reported its work for review: the watch
 * starts no earlier. The test's own clock is no anchor: the answer to
 * signal_review reaches it some time after, up to seconds on a busy machine.
 */
async function reportedAt(runId: string, agentId: string): Promise<number> {
  const [reported] = await events(runId, 'completion.reported', (e) => e.agent_id === agentId);
  return tsOf(reported);
}

async function questionAbout(runId: string, kind: string, agentId?: string): Promise<any> {
  return eventually(async () => {
    const qs = (await stack.operator.request('GET', `/questions?run=${runId}`)).json.questions;
    return qs.find((q: any) => q.system?.kind === kind && (agentId === undefined || q.system.agent_id === agentId));
  }, 20_000);
}

/**
 * The tests that leave the worker alone run side by side (each on its own
 * run, timers of one to three seconds); the two that restart it follow, one
 * at a time.
 */
describe('watchdog passes A and B, and its questions', () => {
  it.concurrent('pass A: reminds the leader twice, one interval apart, then asks the person, then stays silent', async () => {
    const { runId, rootId, root, kids } = await team({ review_watchdog_seconds: 1, idle_watchdog_seconds: 0 }, ['a', 'b']);
    const { a, b } = kids;
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
    const reviewedAt = await reportedAt(runId, a.agentId);

    const pings = await events(runId, 'completion.reping', (e) => e.data.child_id === a.agentId, 2);
    expect(pings.map((e) => [e.agent_id, e.data.strike])).toEqual([
      [rootId, 1],
      [rootId, 2],
    ]);
    expect(tsOf(pings[0]) - reviewedAt).toBeGreaterThanOrEqual(900);
    expect(tsOf(pings[1]) - tsOf(pings[0])).toBeGreaterThanOrEqual(900);
    const inbox = (await root.inbox(0, 0)).messages.filter((m: any) => m.content.startsWith('[WATCHDOG]'));
    expect(inbox).toHaveLength(2);
    expect(inbox[0].content).toContain(a.agentId);
    expect(inbox[1].content).toContain('the user will be asked');

    const [escalated] = await events(runId, 'review.escalated_to_user', (e) => e.data.child_id === a.agentId);
    expect(tsOf(escalated) - tsOf(pings[1])).toBeGreaterThanOrEqual(900);
    const q = await questionAbout(runId, 'review_overdue');
    expect(q).toMatchObject({ holder: 'user', system: { agent_id: rootId, child_id: a.agentId } });
    const answered = await stack.operator.request('POST', `/runs/${runId}/questions/${q.qid}/answer`, { answers: [{ selected_labels: [], text: 'Approve a now, please.' }] });
    expect(answered.status).toBe(200);
    await eventually(async () => (await root.inbox(0, 0)).messages.find((m: any) => m.content.startsWith('[FROM USER]') && m.content.includes('Approve a now, please.')));

    // Silence after the question: b's review, reported now, gets both its reminders (over two intervals) while a's count stays.
    await b.client.ok('signal_review', { detail: '[REVIEW REQUIRED] b is done' });
    await events(runId, 'completion.reping', (e) => e.data.child_id === b.agentId, 2);
    expect((await stack.operator.events(runId, 'completion.reping')).filter((e) => e.data.child_id === a.agentId)).toHaveLength(2);
    expect((await stack.operator.events(runId, 'review.escalated_to_user')).filter((e) => e.data.child_id === a.agentId)).toHaveLength(1);

    // Approving ends the watch over b.
    await root.ok('terminate_child', { agent_id: b.agentId });
    const settled = (await stack.operator.events(runId, 'completion.reping')).filter((e) => e.data.child_id === b.agentId).length;
    expect(settled).toBeLessThanOrEqual(2);
  }, 60_000);

  it.concurrent('pass B: nudges an idle agent twice and then asks the person, but never one that only reads', async () => {
    let reading = true;
    let reads: Promise<void> = Promise.resolve();
    let acking = true;
    let acks: Promise<void> = Promise.resolve();
    let asked: Promise<unknown> = Promise.resolve();
    // The reader reads and the asker asks from the moment each joins: on a loaded machine spawning the others takes seconds.
    const { runId, root, kids, unstarted } = await team({ review_watchdog_seconds: 0, idle_watchdog_seconds: 3 }, ['reader', 'asker', 'sleeper', 'acker'], (id, client) => {
      if (id === 'acker') {
        // A stalled agent whose runtime still takes in everything, the watchdog's reminders included, and does nothing.
        acks = (async () => {
          let cursor = 0;
          while (acking) {
            const inbox = await client.inbox(cursor, 1000).catch(() => null);
            const last = inbox?.messages.at(-1);
            if (last) await client.ack(last.seq).catch(() => undefined);
            if (inbox) cursor = inbox.next_cursor;
          }
        })();
      }
      if (id === 'reader') {
        // Reads only: Queries its workflow never sees, marked by the gateway.
        reads = (async () => {
          while (reading) {
            // A read refused for now (the gateway confirming tokens again) is simply made again.
            await client.call('list_peers', { scope: 'team' }).catch(() => undefined);
            await new Promise((r) => setTimeout(r, 300));
          }
        })();
      }
      // Waiting on its own question is not idleness either.
      if (id === 'asker') {
        asked = client.mcp.callTool(
          { name: 'ask_user', arguments: { questions: [{ question: 'Which port?', header: 'Port', multiSelect: false, options: [] }] } },
          undefined,
          { timeout: 60_000 },
        );
      }
    }, ['nobody']);
    const { reader, sleeper, asker } = kids;
    // Stopped however the test ends, before the clients close.
    afterAllStops.push(async () => {
      reading = false;
      acking = false;
      await reads.catch(() => undefined);
      await acks.catch(() => undefined);
    });

    const nudges = await events(runId, 'liveness.nudge', (e) => e.agent_id === sleeper.agentId, 2);
    expect(nudges.map((e) => e.data.strike)).toEqual([1, 2]);
    expect(tsOf(nudges[1]) - tsOf(nudges[0])).toBeGreaterThanOrEqual(2900);
    const [escalated] = await events(runId, 'liveness.escalated_to_user', (e) => e.agent_id === sleeper.agentId);
    reading = false;
    await reads;
    expect(tsOf(escalated) - tsOf(nudges[1])).toBeGreaterThanOrEqual(2900);
    const inbox = (await sleeper.client.inbox(0, 0)).messages.filter((m: any) => m.content.startsWith('[WATCHDOG]'));
    expect(inbox.map((m: any) => m.content.includes('signal_review') && m.content.includes('ask_user'))).toEqual([true, true]);

    // Three intervals passed for the sleeper; the reader and the asker were never nudged, nor the member nobody acts as.
    const all = await stack.operator.events(runId, 'liveness.nudge');
    expect(all.filter((e) => [reader.agentId, asker.agentId, unstarted.nobody].includes(e.agent_id))).toEqual([]);
    const rows = (await stack.operator.request('GET', `/runs/${runId}/agents`)).json.agents as any[];
    expect(rows.find((r) => r.agent_id === unstarted.nobody).health).toMatchObject({ state: 'waiting', waiting_on: { kind: 'runtime', for: 'start' } });

    // Taking in the reminders is no sign of life: the agent that only acknowledges climbs the same ladder to the person.
    const ackerNudges = await events(runId, 'liveness.nudge', (e) => e.agent_id === kids.acker.agentId, 2);
    expect(ackerNudges.map((e) => e.data.strike)).toEqual([1, 2]);
    await events(runId, 'liveness.escalated_to_user', (e) => e.agent_id === kids.acker.agentId);
    expect(await questionAbout(runId, 'agent_idle', kids.acker.agentId)).toBeDefined();
    acking = false;
    await acks;

    const q = await questionAbout(runId, 'agent_idle', sleeper.agentId);
    expect(q.system.agent_id).toBe(sleeper.agentId);
    await stack.operator.request('POST', `/runs/${runId}/questions/${q.qid}/answer`, { answers: [{ selected_labels: [], text: 'Wake up and report.' }] });
    await eventually(async () => (await sleeper.client.inbox(0, 0)).messages.find((m: any) => m.content.includes('Wake up and report.')));

    // The asker's question still waits in its leader's inbox; answered there, the call returns.
    const held = await eventually(async () => (await root.inbox(0, 0)).messages.find((m: any) => m.content.startsWith('[INBOX QUESTION]')));
    const qid = /qid: (q_[A-Za-z0-9_-]+)/.exec(held.content)![1];
    await root.ok('answer_question', { qid, answers: [{ selected_labels: [], text: '8080' }], reason: 'The plan fixes it.' });
    expect(((await asked) as any).structuredContent.answer_text).toBe('Port: 8080');
  }, 60_000);

  it.concurrent("the watchdog's questions stop at the run's limit on open questions; the rest are recorded, not asked", async () => {
    const { runId, kids } = await team({ review_watchdog_seconds: 0, idle_watchdog_seconds: 1, max_open_questions: 1 }, ['a', 'b', 'c']);
    const [dropped] = await events(runId, 'system_question_dropped');
    expect(dropped.data).toMatchObject({ kind: 'agent_idle', limit: 1 });
    expect(Object.values(kids).map((k) => k.agentId)).toContain(dropped.data.about);
    const idle = await eventually(async () => {
      const qs = (await stack.operator.request('GET', `/questions?run=${runId}`)).json.questions.filter((q: any) => q.system?.kind === 'agent_idle');
      return qs.length > 0 ? qs : undefined;
    });
    expect(idle).toHaveLength(1);
  }, 60_000);
});

describe('watchdog passes A and C across a worker restart', () => {
  // One restart serves both tests. Each builds its team, then both set their timers going at once and wait for the
  // restart: a timer started while the other test still spawned could fire before the worker dies.
  const teamsReady = meeting(2);
  const restart = restartWhenAllReady(2);

  it.concurrent('pass A: fires after a worker restart while its timer is pending', async () => {
    const { runId, rootId, kids } = await team({ review_watchdog_seconds: 3, idle_watchdog_seconds: 0 }, ['a']);
    await teamsReady();
    await kids.a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
    await restart();
    const reviewedAt = await reportedAt(runId, kids.a.agentId);
    const [ping] = await events(runId, 'completion.reping', (e) => e.data.child_id === kids.a.agentId, 1, 60_000);
    expect(ping.agent_id).toBe(rootId);
    expect(tsOf(ping) - reviewedAt).toBeGreaterThanOrEqual(2900);
  }, 120_000);

  it.concurrent('pass C: forces the runtime down after the grace period, across a worker restart', async () => {
    const { runId, root, kids } = await team({ terminate_grace_seconds: 2, review_watchdog_seconds: 0, idle_watchdog_seconds: 0 }, ['a']);
    await teamsReady();
    await kids.a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
    await root.ok('terminate_child', { agent_id: kids.a.agentId });
    // The child never reads its inbox, so never acknowledges the sentinel; the worker dies meanwhile.
    await restart();
    // Written by an activity the killed worker may have held: it runs again once its 10 s timeout passes.
    const [approved] = await events(runId, 'completion.approved', (e) => e.data.target === kids.a.agentId, 1, 60_000);
    const postedAt = tsOf(approved);
    const [forced] = await events(runId, 'terminate.forced', (e) => e.agent_id === kids.a.agentId && e.data.reason === 'watchdog_grace', 1, 60_000);
    expect(tsOf(forced) - postedAt).toBeGreaterThanOrEqual(1900);
    const [completed] = await events(runId, 'agent_completed', (e) => e.agent_id === kids.a.agentId);
    expect(completed.data.stop_reason).toBe('cancelled');
  }, 120_000);
});

