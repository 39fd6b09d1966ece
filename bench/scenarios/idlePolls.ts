import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import type { Agents, BenchRun } from '../client';

/** One measured window of the idle-cost table. */
export interface IdleLine {
  what: string;
  seconds: number;
  /** Calls the Temporal frontend served, per second, all methods (workers' polls included). */
  callsPerSecond: number;
  /** Of which workflow Queries. */
  queriesPerSecond: number;
  /** CPU per process over the window, in percent of one core. */
  cpu: Record<string, number | undefined>;
}

/** The frontend's request counters, from the Temporal server's Prometheus endpoint. */
async function frontendRequests(metricsUrl: string): Promise<{ all: number; queries: number }> {
  const text = await (await fetch(metricsUrl)).text();
  let all = 0;
  let queries = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('service_requests{') || !line.includes('service_name="frontend"')) continue;
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    all += n;
    if (line.includes('operation="QueryWorkflow"')) queries += n;
  }
  return { all, queries };
}

/** User plus system CPU time of a process, in seconds (Linux /proc). */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are 14 and 15.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Temporal frontend calls and CPU per process over a window of `seconds`, after `settleSeconds` first (not counted). */
export async function measureWindow(what: string, seconds: number, metricsUrl: string, pids: Record<string, number | undefined>, opts: { settleSeconds?: number } = {}): Promise<IdleLine> {
  // A benchmark's settling time, not a test's wait: what starts the window (long polls taken) has happened by then.
  if (opts.settleSeconds) await new Promise((r) => setTimeout(r, opts.settleSeconds! * 1000));
  const names = Object.keys(pids);
  const cpuBefore = names.map((n) => cpuSeconds(pids[n]));
  const before = await frontendRequests(metricsUrl);
  const started = performance.now();
  // A benchmark window, not a test's wait: the figures are rates over a fixed time.
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (performance.now() - started) / 1000;
  const after = await frontendRequests(metricsUrl);
  const cpu: Record<string, number | undefined> = {};
  names.forEach((n, i) => {
    const end = cpuSeconds(pids[n]);
    const start = cpuBefore[i];
    cpu[n] = end === undefined || start === undefined ? undefined : ((end - start) / elapsed) * 100;
  });
  return { what, seconds: elapsed, callsPerSecond: (after.all - before.all) / elapsed, queriesPerSecond: (after.queries - before.queries) / elapsed, cpu };
}

/**
 * Each agent's runtime long poll, over and over, as the reference runtime does, until stopped: asked again as soon as
 * it is answered, after a second when refused or failed on the way. `onAnswer` hears each answer's HTTP status.
 */
export function pollForever(gatewayUrl: string, token: string, waitMs: number, stop: AbortSignal, onAnswer: (status: number) => void): Promise<void> {
  return (async () => {
    let cursor = 0;
    while (!stop.aborted) {
      try {
        const res = await fetch(`${gatewayUrl}/api/runtime/inbox?cursor=${cursor}&wait_ms=${waitMs}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: stop,
        });
        const body = (await res.json()) as { next_cursor?: number };
        if (typeof body.next_cursor === 'number') cursor = body.next_cursor;
        onAnswer(res.status);
        if (res.status === 200) continue;
      } catch {
        if (stop.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
}

/**
 * What idle agents cost: the run's members doing nothing, then each
 * holding its runtime's long poll (wait_ms 20 s, asked again at once when
 * answered), measured over the same window: Temporal frontend calls per
 * second and CPU of the Temporal server, worker and gateway.
 */
export async function idleCost(
  agents: Agents,
  run: BenchRun,
  opts: { seconds: number; waitMs: number; metricsUrl: string; pids: Record<string, number | undefined>; progress: (m: string) => void },
): Promise<IdleLine[]> {
  const n = run.memberIds.length.toLocaleString('en-US');
  const tokens: string[] = [];
  for (let i = 0; i < run.memberIds.length; i += 25) {
    const batch = run.memberIds.slice(i, i + 25);
    tokens.push(...(await Promise.all(batch.map(async (id) => (await agents.operator.launch(run.runId, id)).token as string))));
  }
  opts.progress(`idle cost: ${n} agents, nobody polling, ${opts.seconds} s`);
  const quiet = await measureWindow(`${n} idle agents, no long polls`, opts.seconds, opts.metricsUrl, opts.pids);
  const stop = new AbortController();
  // One signal for every poll: a thousand listeners on it are expected.
  setMaxListeners(0, stop.signal);
  let answered = 0;
  const polls = tokens.map((t) => pollForever(agents.gatewayUrl, t, opts.waitMs, stop.signal, (status) => void (status === 200 && answered++)));
  // Settle: every poll has been taken and has asked its first Query.
  await new Promise((r) => setTimeout(r, 5000));
  opts.progress(`idle cost: ${n} agents long-polling (wait_ms ${opts.waitMs}), ${opts.seconds} s`);
  const polling = await measureWindow(`${n} idle agents, each long-polling (wait_ms ${opts.waitMs / 1000} s)`, opts.seconds, opts.metricsUrl, opts.pids);
  stop.abort();
  await Promise.all(polls);
  if (answered === 0 && opts.seconds * 1000 > opts.waitMs) throw new Error('no long poll was answered in the window');
  return [quiet, polling];
}
