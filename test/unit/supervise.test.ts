import { supervise, type Backoff, type Running } from '../../src/devstack/supervise';

/** A fake process that exits on its own `livesMs` after each start; the times of its starts and exits. */
function fakeProcess(livesMs: number) {
  const starts: number[] = [];
  const exits: number[] = [];
  let timers: NodeJS.Timeout[] = [];
  const start = async (): Promise<Running> => {
    starts.push(Date.now());
    let end!: (how: string) => void;
    const exited = new Promise<string>((resolve) => (end = resolve)).then((how) => {
      exits.push(Date.now());
      return how;
    });
    timers.push(setTimeout(() => end('code 1'), livesMs));
    return { pid: 1, exited, stop: async () => end('stopped') };
  };
  const gaps = () => starts.slice(1).map((at, i) => at - exits[i]);
  const clear = () => {
    for (const t of timers) clearTimeout(t);
    timers = [];
  };
  return { start, starts, gaps, clear };
}

async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 10));
}

/** Supervises a fake process that lives `livesMs` a start until it has started six times; the pauses between its exits and restarts. */
async function pausesOf(livesMs: number, backoff: Backoff): Promise<number[]> {
  const p = fakeProcess(livesMs);
  const s = await supervise('fake', p.start, () => undefined, backoff);
  await until(() => p.starts.length >= 6);
  await s.stop();
  p.clear();
  return p.gaps().slice(0, 5);
}

describe('supervise', () => {
  const backoff = { firstMs: 100, maxMs: 5_000, healthyRunMs: 200 };

  it('waits longer each time a process keeps dying right after its start (a crash loop)', async () => {
    const gaps = await pausesOf(0, backoff);
    // 100, 200, 400, 800, 1600 ms: a timer never fires early (a millisecond of rounding aside).
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i - 2));
  }, 20_000);

  it('brings back a process that had started fine after the first pause, however often it is killed', async () => {
    // A crash loop's fifth pause would be 1.6 s; each of these is the first pause again.
    for (const gap of await pausesOf(300, backoff)) expect(gap).toBeLessThan(1_000);
  }, 20_000);
});
