import { counter } from '../../src/temporal/counted';
import { Calls, callTime, type CallPolicy } from '../../src/temporal/policy';
import { underDeadline } from '../../src/temporal';
import { QUERY_COLD } from '../../src/common/pure/queryGuard';

/**
 * The one call policy of src/temporal, over a recording stand-in for the
 * SDK's deadline setter: what each attempt is given and how often it is
 * made. test/upstream and the durability tests show the same loops against
 * the real server (a dead worker's sticky queue, a cold workflow).
 */
function calls(policy: CallPolicy) {
  const deadlines: number[] = [];
  const c = new Calls(policy, counter(undefined), (deadline, fn) => {
    deadlines.push(deadline);
    return fn();
  });
  return { calls: c, deadlines };
}

/** An error the client throws for a gRPC status (4: no answer in time; 3: a bad argument). */
const status = (code: number) => Object.assign(new Error('call failed'), { cause: Object.assign(new Error('grpc'), { code }) });
const tooMany = () => Object.assign(new Error('too many outstanding updates'), { code: 8 });

it("a call made under a caller's deadline ends its RPCs a reserve before it, and asks why it failed within that reserve", async () => {
  const end = Date.now() + 20_000;
  const time = await underDeadline(end, async () => callTime({ callTimeoutMs: 5000 }));
  expect(time!.end).toBe(end);
  expect(end - time!.rpc).toBeCloseTo(1000, -1);
  expect(time!.diagnosis).toBeGreaterThan(time!.rpc);
  expect(time!.diagnosis).toBeLessThan(end);
  // Outside any call: the policy's timeout, or nothing at all (the worker, the CLI).
  const own = callTime({ callTimeoutMs: 2000 })!;
  expect(own.end - Date.now()).toBeLessThanOrEqual(2000);
  expect(own.end - own.rpc).toBeCloseTo(500, -1);
  expect(callTime({})).toBeUndefined();
});

it('every attempt of an Update carries one id, and only refusals that say it was never applied are sent again', async () => {
  const { calls: c, deadlines } = calls({ callTimeoutMs: 10_000 });
  const ids: string[] = [];
  const answer = await c.update('update', async (id) => {
    ids.push(id);
    if (ids.length < 3) throw tooMany();
    return 'applied';
  });
  expect(answer).toBe('applied');
  expect(ids).toHaveLength(3);
  expect(new Set(ids).size).toBe(1);
  expect(deadlines).toHaveLength(3);

  const sent: string[] = [];
  await expect(
    c.update(
      'update',
      async (id) => {
        sent.push(id);
        throw status(3);
      },
      'callers-own-id',
    ),
  ).rejects.toThrow('call failed');
  expect(sent).toEqual(['callers-own-id']);
});

it('a cold workflow is woken once and asked again; a Query answer that cannot come later is not asked again', async () => {
  const { calls: c } = calls({ callTimeoutMs: 10_000, stickyTimeoutMs: 5000 });
  let asked = 0;
  let woken = 0;
  const view = await c.query(
    async () => {
      asked++;
      if (asked <= 2) throw new Error(`workflow said: ${QUERY_COLD}`);
      return 'view';
    },
    async () => void woken++,
  );
  expect([view, asked, woken]).toEqual(['view', 3, 1]);

  let failing = 0;
  await expect(
    c.query(
      async () => {
        failing++;
        throw status(3);
      },
      async () => undefined,
    ),
  ).rejects.toThrow('call failed');
  expect(failing).toBe(1);
});

it("a Query attempt never outlives the sticky timeout, and one left unanswered is not sent again past the caller's deadline", async () => {
  const { calls: c, deadlines } = calls({ callTimeoutMs: 2000, stickyTimeoutMs: 5000 });
  let asked = 0;
  await expect(
    c.query(
      async () => {
        asked++;
        throw status(4);
      },
      async () => undefined,
    ),
  ).rejects.toThrow('call failed');
  // The next attempt would come after the sticky timeout (5 s), past the call's 2 s: so only one was made.
  expect(asked).toBe(1);
  expect(deadlines).toHaveLength(1);

  // Sent at some moment between before and after: its deadline is that moment and the cap (the sticky timeout less a
  // second), well inside the call's minute.
  const capped = calls({ callTimeoutMs: 60_000, stickyTimeoutMs: 5000 });
  const before = Date.now();
  await capped.calls.query(async () => 'ok', async () => undefined);
  const after = Date.now();
  expect(capped.deadlines[0] - 4000).toBeGreaterThanOrEqual(before);
  expect(capped.deadlines[0] - 4000).toBeLessThanOrEqual(after);
});

it('without a deadline or a sticky timeout (a CLI), an unanswered Query is given up at once instead of waited on forever', async () => {
  const { calls: c, deadlines } = calls({});
  let asked = 0;
  await expect(
    c.query(
      async () => {
        asked++;
        throw status(14);
      },
      async () => undefined,
    ),
  ).rejects.toThrow('call failed');
  expect(asked).toBe(1);
  expect(deadlines).toEqual([]);
});
