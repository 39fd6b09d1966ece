import { Writable } from 'node:stream';
import pino from 'pino';
import { startStallWatch, type StatusOf } from '../../src/worker/stallWatch';
import { eventually } from '../support/clients';

/** A logger whose lines the test reads back. */
function capture() {
  const lines: any[] = [];
  const out = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: pino({ level: 'info' }, out), lines };
}

const status = (polling: boolean): StatusOf => ({
  runState: 'RUNNING',
  hasOutstandingWorkflowPoll: polling,
  numInFlightWorkflowActivations: 0,
  numInFlightActivities: 0,
  numCachedWorkflows: 3,
});

const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

it('reports a running worker with no workflow poll once per stall, and again when it polls', async () => {
  const { log, lines } = capture();
  let polling = true;
  let looked = 0;
  stops.push(startStallWatch([{ queue: 'q', status: () => (looked++, status(polling)) }], log, { everyMs: 20, looks: 3, blockedMs: 60_000 }));
  // Polling: several looks, nothing said.
  await eventually(async () => (looked >= 5 ? true : undefined), 5_000, 5);
  expect(lines).toEqual([]);
  polling = false;
  const stalled = await eventually(async () => lines.find((l) => l.msg.includes('has not polled')), 5_000, 5);
  expect(stalled).toMatchObject({ queue: 'q', numCachedWorkflows: 3, level: 40 });
  // Said once, however long the stall lasts.
  const at = looked;
  await eventually(async () => (looked >= at + 5 ? true : undefined), 5_000, 5);
  expect(lines.filter((l) => l.msg.includes('has not polled'))).toHaveLength(1);
  polling = true;
  await eventually(async () => lines.find((l) => l.msg.includes('polls for workflow tasks again')), 5_000, 5);
});

it('a stopped worker is not a stalled one', async () => {
  const { log, lines } = capture();
  let looked = 0;
  stops.push(startStallWatch([{ queue: 'q', status: () => (looked++, { ...status(false), runState: 'STOPPED' }) }], log, { everyMs: 20, looks: 2, blockedMs: 60_000 }));
  await eventually(async () => (looked >= 6 ? true : undefined), 5_000, 5);
  expect(lines).toEqual([]);
});

it('reports an event loop that stood still', async () => {
  const { log, lines } = capture();
  stops.push(startStallWatch([], log, { everyMs: 20, blockedMs: 200 }));
  // A synchronous wait, as a lock held by another process makes one.
  const until = Date.now() + 400;
  while (Date.now() < until);
  const blocked = await eventually(async () => lines.find((l) => l.msg === 'the event loop stood still'), 5_000, 5);
  expect(blocked.blockedMs).toBeGreaterThanOrEqual(200);
});
