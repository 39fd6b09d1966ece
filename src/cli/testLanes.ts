import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { projectRoot } from '../common/projectRoot';

/**
 * The second lane's ports sit this far below the first's: every port a test stack takes is moved from the run's own
 * gateway port (test/support/stack.ts), and 4,000 below keeps the second lane's 22,2xx-25,4xx clear of the first's
 * 26,2xx-29,9xx and of Linux's ephemeral range (32,768 up), where an outgoing connection could hold one.
 */
const SECOND_LANE_SHIFT = -4000;

/**
 * Runs the whole suite as two jest processes at once, each in band with a test stack of its own (test/setup/lanes.js
 * says which files go where). The first lane writes to the terminal as it goes; the second's lines come as they come,
 * each marked `lane 2 |`. Resolves with the first lane's non-zero exit code, else the second's.
 */
export async function runTestLanes(jest: string): Promise<number> {
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
