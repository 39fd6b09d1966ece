import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { readTestEnv, testDataRoot } from '../setup/env';
import { projectRoot } from '../support/processes';

const env = readTestEnv();
let demo: ChildProcess | undefined;

afterAll(() => {
  if (demo && demo.exitCode === null) demo.kill('SIGKILL');
});

describe('dipper demo', () => {
  it('runs the whole team on Claude sessions and the scripted model, without a key, completes the run and says how long it took', async () => {
    const dataDir = path.join(testDataRoot, 'demo-data');
    demo = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo', '--exit'], {
      cwd: projectRoot,
      env: {
        // Nothing of a model key in its environment: the demo needs none.
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|DIPPER_MODEL_)/.test(k))),
        TEMPORAL_ADDRESS: env.temporalAddress,
        DIPPER_DATA_DIR: dataDir,
        DIPPER_STACK_FILE: path.join(dataDir, 'stack.json'),
        DIPPER_PORT: '28935',
        DIPPER_TASK_QUEUE: 'dipper-demo',
        DIPPER_WORKFLOW_BUNDLE: env.bundlePath,
        DIPPER_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    demo.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => demo!.once('close', resolve));
    expect({ code, tail: errors.split('\n').slice(-20).join('\n') }).toEqual({ code: 0, tail: expect.any(String) });
    expect(output).toMatch(/demo: the person answers "May the summary quote the customer list\?": No/);
    expect(output).toMatch(/demo: the person approves the iSphere send /);
    expect(output).toMatch(/demo: the person lets the run end/);
    const took = /demo: run run_\w+ completed in (\d+) s/.exec(output);
    expect(took).not.toBeNull();
    process.stdout.write(`dipper demo: completed in ${took![1]} s\n`);
  }, 240_000);
});
