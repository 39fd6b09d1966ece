import { Client, Connection } from '@temporalio/client';
import { installQuietRuntime } from '../../src/ops/quietRuntime';
import { mapOrdered } from '../../src/ops/ordered';
import { HISTORY_CHANNEL_ARGS, replayHistories, type ReplayOutcome } from '../../src/ops/replayAll';
import { Temporal, type History, type WorkflowSummary } from '../../src/temporal';
import { readTestEnv } from './env';

/**
 * The replayer that runs beside the test files (test/setup/replayAlongside.ts
 * starts it, at the lowest CPU priority). It replays each workflow run as
 * soon as it closes, so the end-of-run replay is left with the runs still
 * open. A closed history never changes: replaying it early says what
 * replaying it at the end would. Told to finish, it replays what it has
 * fetched, sends its outcomes and exits.
 */
const POLL_MS = 3000;
/** Visibility may list a run a little after it closed; each poll looks back this far, and repeats are dropped. */
const LOOK_BACK_MS = 60_000;
/** Histories fetched ahead of the replayer, at most: the rest wait in visibility, not in memory. */
const AHEAD = 8;
/** An open run is replayed once nothing has happened in it for this long (a test file done with it). */
const QUIET_MS = 10_000;
/** How often the open runs are looked at. */
const OPEN_SCAN_MS = 10_000;

function eventMs(event: { eventTime?: { seconds?: unknown; nanos?: number | null } | null } | undefined): number {
  return Number(event?.eventTime?.seconds ?? 0) * 1000;
}

type Item = { workflowId: string; runId: string; history: History };

async function main(): Promise<void> {
  const root = process.argv[2];
  const env = readTestEnv(root);
  installQuietRuntime();
  const connection = await Connection.connect({ address: env.temporalAddress, channelArgs: HISTORY_CHANNEL_ARGS });
  const temporal = Temporal.over(new Client({ connection, namespace: env.namespace }));

  let finishing = false;
  let wake = () => undefined as void;
  process.on('message', (m) => {
    if (m === 'finish') finishing = true;
    wake();
  });
  // The test run went away without a word: nothing is waiting for the outcomes.
  process.on('disconnect', () => process.exit(0));

  const queue: Item[] = [];
  let closed = false;
  // The replayer waits for the queue to fill, the fetcher for it to drain: one list of waiters serves both.
  const waiters: (() => void)[] = [];
  const changed = () => waiters.splice(0).forEach((w) => w());
  const nextChange = () => new Promise<void>((r) => waiters.push(r));
  async function* fed(): AsyncGenerator<Item> {
    for (;;) {
      const item = queue.shift();
      if (item) {
        changed();
        yield item;
      } else if (closed) return;
      else await nextChange();
    }
  }
  async function push(item: Item): Promise<void> {
    while (queue.length >= AHEAD) await nextChange();
    queue.push(item);
    changed();
  }

  const outcomes: ReplayOutcome[] = [];
  const replaying = (async () => {
    for await (const o of replayHistories(env.bundlePath, fed())) outcomes.push(o);
  })();

  // The history length each run was last queued at; a run is queued again only when it has grown.
  const queuedAt = new Map<string, number>();
  // When each open run may next be looked at: quiet ones are replayed, busy ones looked at later and later.
  const recheck = new Map<string, { at: number; wait: number }>();
  async function take(candidates: WorkflowSummary[], quietOnly: boolean): Promise<void> {
    const fetched = mapOrdered(candidates, 4, (wf) => temporal.handle(wf.workflowId, wf.runId).fetchHistory().then((history) => ({ wf, history }), () => undefined));
    for await (const f of fetched) {
      if (finishing) return;
      if (!f) continue; // the end-of-run replay fetches it again
      const events = f.history.events ?? [];
      if (queuedAt.get(f.wf.runId) === events.length) continue;
      if (quietOnly && Date.now() - eventMs(events.at(-1)) < QUIET_MS) continue;
      queuedAt.set(f.wf.runId, events.length);
      await push({ workflowId: f.wf.workflowId, runId: f.wf.runId, history: f.history });
    }
  }

  let since: string | undefined;
  let lastOpenScan = 0;
  while (!finishing) {
    const pollStarted = Date.now();
    try {
      const closed: WorkflowSummary[] = [];
      for await (const wf of temporal.list(`ExecutionStatus != "Running"${since ? ` AND CloseTime >= "${since}"` : ''}`)) {
        if (queuedAt.get(wf.runId) !== wf.historyLength) closed.push(wf);
      }
      await take(closed, false);
      since = new Date(pollStarted - LOOK_BACK_MS).toISOString();
      if (Date.now() - lastOpenScan >= OPEN_SCAN_MS) {
        lastOpenScan = Date.now();
        const open: WorkflowSummary[] = [];
        for await (const wf of temporal.list('ExecutionStatus = "Running"')) {
          const r = recheck.get(wf.runId) ?? { at: 0, wait: OPEN_SCAN_MS };
          if (r.at > lastOpenScan) continue;
          recheck.set(wf.runId, { at: lastOpenScan + r.wait, wait: Math.min(r.wait * 2, 300_000) });
          open.push(wf);
        }
        await take(open, true);
      }
    } catch (err) {
      // The server restarting, or busy: the next poll looks again.
      process.stderr.write(`replay alongside: poll failed: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    if (!finishing) await new Promise<void>((r) => ((wake = r), setTimeout(r, POLL_MS)));
  }
  closed = true;
  changed();
  await replaying;
  await connection.close();
  process.send!({ outcomes }, () => process.exit(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`replay alongside: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
