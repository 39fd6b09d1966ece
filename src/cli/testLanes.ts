import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from '../common/projectRoot';

/**
 * The second lane's ports sit this far below the first's: every port a test stack takes is moved from the run's own
 * gateway port (test/support/stack.ts), and 4,000 below keeps the second lane's 22,2xx-25,4xx clear of the first's
 * 26,2xx-29,9xx and of Linux's ephemeral range (32,768 up), where an outgoing connection could hold one.
 */
const SECOND_LANE_SHIFT = -4000;

/**
 * Runs the whole suite as two jest processes at once, each in band with a test stack of its own (test/setup/lanes.js
 * says which files go where), when the machine has CPU to spare for the second; otherwise as one, in band. The first
 * lane writes to the terminal as it goes; the second's lines come as they come, each marked `lane 2 |`. Resolves with
 * the first lane's non-zero exit code, else the second's.
 */
export async function runTestLanes(jest: string): Promise<number> {
  const lanes = await laneCount();
  if (lanes === 1) {
    process.stderr.write(`\ndipper: jest in band, one lane (the machine has little CPU to spare; DIPPER_TEST_LANES=2 runs two)\n`);
    return lane(jest, ['--runInBand'], {}, null);
  }
  const gateway = Number(process.env.DIPPER_TEST_GATEWAY_PORT ?? 28710);
  const temporal = Number(process.env.DIPPER_TEST_TEMPORAL_PORT ?? 27233);
  process.stderr.write(`\ndipper: jest in two lanes at once (test/setup/lanes.js), the second marked "lane 2 |"\n`);
  const first = lane(jest, ['--runInBand', '--shard=1/2'], {}, null);
  const second = lane(
    jest,
    ['--runInBand', '--shard=2/2'],
    { DIPPER_TEST_GATEWAY_PORT: String(gateway + SECOND_LANE_SHIFT), DIPPER_TEST_TEMPORAL_PORT: String(temporal + SECOND_LANE_SHIFT), DIPPER_TEST_LANE: '2' },
    'lane 2 | ',
  );
  const [a, b] = await Promise.all([first, second]);
  return a !== 0 ? a : b;
}

/**
 * Two lanes when at least a third of the machine's CPU sat idle over a second (DIPPER_TEST_LANES=1 or 2 says so
 * instead). The second lane lives on the time one lane leaves the CPU idle (a third of two cores in band); on a
 * machine other work keeps busy there is none, and two lanes only make every test slower: with eight busy loops
 * beside them, recoveries in the crash soak took 130-230 s where one lane's took 15-35 s.
 */
async function laneCount(): Promise<1 | 2> {
  const asked = process.env.DIPPER_TEST_LANES;
  if (asked === '1' || asked === '2') return Number(asked) as 1 | 2;
  const before = cpuTicks();
  await sleep(1000);
  const after = cpuTicks();
  if (!before || !after) return 2;
  const idle = after.idle - before.idle;
  const total = idle + after.busy - before.busy;
  return total > 0 && idle / total >= 1 / 3 ? 2 : 1;
}

/** The machine's busy and idle CPU ticks so far (iowait counts as idle), from Linux's /proc/stat; null elsewhere. */
function cpuTicks(): { busy: number; idle: number } | null {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return { busy: user + nice + system + irq + softirq + steal, idle: idle + iowait };
  } catch {
    return null;
  }
}

function lane(command: string, args: string[], env: Record<string, string>, mark: string | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', mark ? 'pipe' : 'inherit', mark ? 'pipe' : 'inherit'] });
    if (mark) {
      for (const [from, to] of [[child.stdout!, process.stdout], [child.stderr!, process.stderr]] as const) {
        readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(`${mark}${line}\n`));
      }
    }
    child.once('error', reject);
    // Killed by a signal counts as a failure, like a shell's 128+n.
    child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
