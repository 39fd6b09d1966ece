import { setTimeout as sleep } from 'node:timers/promises';
import type { RunRow } from '../gateway/runList';
import { unreachable } from './unreachable';

/** Where the operator API is and who asks: the token is sent, never printed. */
export interface OperatorTarget {
  url: string;
  token: string;
}

type Answer<T> = { body: T } | { failed: string };

/** GET /api<path> as the operator; a failure comes back as one readable sentence. */
async function operatorGet<T>(target: OperatorTarget, path: string): Promise<Answer<T>> {
  const url = `${target.url}/api${path}`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { Authorization: `Bearer ${target.token}` } });
  } catch (err) {
    return { failed: unreachable(target.url, err) };
  }
  const text = await res.text();
  if (res.ok) return { body: JSON.parse(text) as T };
  let said = text.slice(0, 300);
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    said = `${error.code}: ${error.message}`;
  } catch {
    // not the API's JSON error: its first words as they are
  }
  if (res.status === 401) return { failed: `the gateway refused the operator token (${said}). Pass --operator-token or set DIPPER_OPERATOR_TOKEN.` };
  return { failed: `GET /api${path} answered ${res.status} (${said})` };
}

function fail(answer: { failed: string }): number {
  process.stderr.write(`dipper: ${answer.failed}\n`);
  return 1;
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

/** `dipper runs`: GET /api/runs, newest first, as a table or as the API's JSON. */
export async function printRuns(target: OperatorTarget, opts: { status?: string; pageToken?: string; json?: boolean }): Promise<number> {
  const query = new URLSearchParams({ ...(opts.status ? { status: opts.status } : {}), ...(opts.pageToken ? { page_token: opts.pageToken } : {}) });
  const answer = await operatorGet<{ runs: RunRow[]; next_page_token: string | null }>(target, `/runs${query.size ? `?${query}` : ''}`);
  if ('failed' in answer) return fail(answer);
  const { runs, next_page_token: next } = answer.body;
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(answer.body, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) {
    process.stdout.write('No runs.\n');
    return 0;
  }
  const task = (t: string | null) => (t ?? '').replace(/\s+/g, ' ').slice(0, 70);
  const rows = runs.map((r) => [r.run_id, r.status, String(r.agent_count), age(r.age_seconds), task(r.task)]);
  process.stdout.write(`${table([['RUN', 'STATUS', 'AGENTS', 'AGE', 'TASK'], ...rows])}\n`);
  if (next) process.stdout.write(`\nOlder runs: dipper runs --page-token ${next}\n`);
  return 0;
}

interface RunEvent {
  seq: number;
  type: string;
  agent_id: string | null;
  ts: number;
  data: Record<string, unknown>;
}

export interface EventsOptions {
  after: number;
  /** Stop after this many events; none: all of them (and, following, forever). */
  limit?: number;
  type?: string;
  follow?: boolean;
  json?: boolean;
}

/** How often `--follow` asks for new events: the event log is a table read, so a second costs little and feels live. */
const FOLLOW_EVERY_MS = 1000;
/** Events per request; the API allows more, but a page this size prints promptly. */
const PAGE = 1000;

function eventLine(e: RunEvent, json: boolean): string {
  if (json) return JSON.stringify(e);
  const data = JSON.stringify(e.data);
  return [String(e.seq), new Date(e.ts).toISOString(), e.type, e.agent_id ?? '-', data.length > 200 ? `${data.slice(0, 199)}…` : data].join('  ');
}

/**
 * `dipper events <run>`: GET /api/runs/:run/events page by page from
 * --after; with --follow it keeps asking until Ctrl-C (or --limit events).
 */
export async function printEvents(target: OperatorTarget, runId: string, opts: EventsOptions): Promise<number> {
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  if (opts.follow) process.once('SIGINT', onInterrupt);
  let after = opts.after;
  let left = opts.limit ?? Infinity;
  let caughtUp = false;
  const held: RunEvent[] = [];
  const print = (events: RunEvent[]) => {
    events.sort((a, b) => a.ts - b.ts || a.seq - b.seq);
    if (events.length) process.stdout.write(events.map((e) => `${eventLine(e, opts.json === true)}\n`).join(''));
  };
  try {
    while (left > 0 && !stop.signal.aborted) {
      const size = Math.min(PAGE, left);
      const query = new URLSearchParams({ after: String(after), limit: String(size), ...(opts.type ? { type: opts.type } : {}) });
      const answer = await operatorGet<{ events: RunEvent[]; next_after: number }>(target, `/runs/${encodeURIComponent(runId)}/events?${query}`);
      if ('failed' in answer) {
        print(held.splice(0));
        return fail(answer);
      }
      const { events, next_after } = answer.body;
      // The log is written in batches per workflow, so its order is not quite the order things happened in: what is
      // read before catching up is printed at once in time order, and each later batch in time order too.
      held.push(...events);
      after = next_after;
      left -= events.length;
      if (events.length === size) continue;
      print(held.splice(0));
      if (!opts.follow) break;
      if (!caughtUp) process.stderr.write(`dipper: following ${runId}'s new events; Ctrl-C to stop\n`);
      caughtUp = true;
      await sleep(FOLLOW_EVERY_MS, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    print(held.splice(0));
    return 0;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}
