import { setMaxListeners } from 'node:events';
import type { Agents, BenchAgent } from '../client';
import { rssMiB } from '../memory';
import { summarize } from '../stats';
import { measureWindow, pollForever, type IdleLine } from './idlePolls';

/** One run of the scale scenario: its id and every agent's id and token, the root first. */
interface ScaleRun {
  runId: string;
  agents: { agentId: string; token: string }[];
}

/** What the scale scenario reports each time the built agents reach a checkpoint. */
export interface ScaleLine {
  agents: number;
  runs: number;
  /** Seconds spent building the runs since the last checkpoint. */
  buildSeconds: number;
  rss: Record<string, number | undefined>;
  /** Every agent built so far holding its runtime's long poll. */
  polling: IdleLine;
  /**
   * The polls' answers in the window, per second: an idle poll is answered once a wait (20 s), so all of them live
   * answer about agents / 20 a second; refusals (503, 429) say the polls were not all held, so the calls per second
   * mean something only beside these.
   */
  answers: { perSecond: number; refusedPerSecond: number };
  send: { p50: number; p99: number; errors: number };
  peers: { p50: number; p99: number; errors: number };
}

export interface ScaleOptions {
  /** Agents to build in all, in runs of `perRun` (a root and its one team). */
  agents: number;
  perRun: number;
  /** Totals at which to measure, ascending. */
  checkpoints: number[];
  windowSeconds: number;
  /** send_message and list_peers calls timed at each checkpoint. */
  calls: number;
  metricsUrl: string;
  pids: Record<string, number | undefined>;
  progress: (message: string) => void;
}

/** Runs built at once. */
const BUILDING_AT_ONCE = 8;

/** A deterministic pick, so two runs of the scenario time the same calls. */
function picker(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

async function buildRun(agents: Agents, size: number): Promise<ScaleRun> {
  const run = await agents.startRun(size);
  const members: { agentId: string; token: string }[] = [];
  for (let i = 0; i < run.memberIds.length; i += 25) {
    const batch = run.memberIds.slice(i, i + 25);
    members.push(...(await Promise.all(batch.map(async (id) => ({ agentId: id, token: (await agents.operator.launch(run.runId, id)).token as string })))));
  }
  await run.root.close();
  return { runId: run.runId, agents: [{ agentId: run.root.agentId, token: run.rootToken }, ...members] };
}

/** Timed calls from a pool of agents of random runs: send_message to a random agent of the sender's run, list_peers. */
async function timeCalls(agents: Agents, runs: ScaleRun[], calls: number, pick: (n: number) => number) {
  const pool: { client: BenchAgent; run: ScaleRun }[] = [];
  for (let i = 0; i < Math.min(50, runs.length); i++) {
    const run = runs[pick(runs.length)];
    const who = run.agents[pick(run.agents.length)];
    pool.push({ client: await agents.connect('beidou', who.agentId, who.token), run });
  }
  const send: number[] = [];
  const peers: number[] = [];
  let sendErrors = 0;
  let peerErrors = 0;
  for (let i = 0; i < calls; i++) {
    const { client, run } = pool[pick(pool.length)];
    const others = run.agents.filter((a) => a.agentId !== client.agentId);
    const to = others[pick(others.length)].agentId;
    let started = performance.now();
    try {
      await client.call('send_message', { to, content: `scale ${i}` });
      send.push(performance.now() - started);
    } catch {
      sendErrors++;
    }
    started = performance.now();
    try {
      await client.call('list_peers', { scope: 'team' });
      peers.push(performance.now() - started);
    } catch {
      peerErrors++;
    }
  }
  await Promise.all(pool.map((p) => p.client.close()));
  const figures = (xs: number[], errors: number) => {
    const s = summarize(xs);
    return { p50: s.median, p99: s.p99, errors };
  };
  return { send: figures(send, sendErrors), peers: figures(peers, peerErrors) };
}

/**
 * Issue 41's scale scenario: runs of `perRun` agents built one after
 * another until `agents`, and at each checkpoint the processes' memory,
 * what every agent built so far costs while each holds its runtime's long
 * poll, and send_message and list_peers from agents of random runs (most
 * of whose workflows have left the worker's cache: the cold ones count).
 */
export async function scaleScenario(agents: Agents, o: ScaleOptions): Promise<ScaleLine[]> {
  const runs: ScaleRun[] = [];
  const lines: ScaleLine[] = [];
  const pick = picker(41);
  let built = 0;
  for (const checkpoint of o.checkpoints) {
    const started = performance.now();
    while (built < checkpoint) {
      // Runs side by side, as many users' would be: one after another, 10,000 agents took over an hour.
      const sizes: number[] = [];
      for (let left = checkpoint - built; left > 0 && sizes.length < BUILDING_AT_ONCE; left -= sizes.at(-1)!) sizes.push(Math.min(o.perRun, left));
      const made = await Promise.all(sizes.map((size) => buildRun(agents, size)));
      runs.push(...made);
      built += made.reduce((n, r) => n + r.agents.length, 0);
      if (runs.length % 50 < BUILDING_AT_ONCE) o.progress(`scale: ${built.toLocaleString('en-US')} agents in ${runs.length} runs`);
    }
    const buildSeconds = (performance.now() - started) / 1000;
    const rss = Object.fromEntries(Object.entries(o.pids).map(([name, pid]) => [name, rssMiB(pid)]));
    o.progress(`scale: ${built.toLocaleString('en-US')} agents built in ${buildSeconds.toFixed(0)} s; timing calls`);
    const { send, peers } = await timeCalls(agents, runs, o.calls, pick);
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    const everyone = runs.flatMap((r) => r.agents);
    o.progress(`scale: ${everyone.length.toLocaleString('en-US')} long polls, ${o.windowSeconds} s`);
    // Answers by HTTP status, 200 the polls' own.
    const byStatus = new Map<number, number>();
    const polls = everyone.map((a) => pollForever(agents.gatewayUrl, a.token, 20_000, stop.signal, (status) => void byStatus.set(status, (byStatus.get(status) ?? 0) + 1)));
    const counts = () => [...byStatus].reduce((c, [status, n]) => (status === 200 ? { ...c, ok: c.ok + n } : { ...c, refused: c.refused + n }), { ok: 0, refused: 0 });
    // A benchmark's settling time: every poll taken and its first Query asked before the window opens.
    await new Promise((r) => setTimeout(r, 10_000));
    const before = counts();
    const polling = await measureWindow(`${everyone.length} agents long-polling`, o.windowSeconds, o.metricsUrl, o.pids);
    const after = counts();
    const answers = { perSecond: (after.ok - before.ok) / polling.seconds, refusedPerSecond: (after.refused - before.refused) / polling.seconds };
    stop.abort();
    await Promise.all(polls);
    const refused = [...byStatus].filter(([status]) => status !== 200);
    if (refused.length > 0) o.progress(`scale: polls refused, by HTTP status: ${refused.map(([status, n]) => `${status} ×${n}`).join(', ')}`);
    lines.push({ agents: built, runs: runs.length, buildSeconds, rss, polling, answers, send, peers });
  }
  return lines;
}
