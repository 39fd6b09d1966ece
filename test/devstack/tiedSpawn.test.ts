import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { isRunning } from '../../src/devstack/processes';
import { projectRoot } from '../support/processes';
import { until } from '../cli/npmStart';

// The tied child starts a detached grandchild (as the worker starts agent runtimes) and prints both pids.
const child = `
  const { spawn } = require('node:child_process');
  const runtime = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  runtime.unref();
  console.log(process.pid, runtime.pid);
  setInterval(() => undefined, 1000);
`;
const parent = `
  const { spawnTied } = require('./src/devstack/tiedSpawn.ts');
  spawnTied(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: ['ignore', 'inherit', 'inherit'] });
  setInterval(() => undefined, 1000);
`;

describe('spawnTied', () => {
  let runtimePid: number | undefined;
  afterAll(() => {
    if (runtimePid && isRunning(runtimePid)) process.kill(runtimePid, 'SIGKILL');
  });

  it('kills the child when its parent is killed with SIGKILL, and leaves what the child started detached', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', '-e', parent], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => readline.createInterface({ input: proc.stdout! }).once('line', resolve));
    const [childPid, grandchildPid] = line.split(' ').map(Number);
    runtimePid = grandchildPid;
    expect(isRunning(childPid)).toBe(true);

    proc.kill('SIGKILL');
    await until('the tied child exits', () => !isRunning(childPid), 10_000);
    expect(isRunning(grandchildPid)).toBe(true);
  });
});
