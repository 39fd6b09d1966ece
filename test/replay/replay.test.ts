import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import { readTestEnv } from '../setup/env';

/**
 * Today's workflow code must replay histories recorded by earlier commits
 * (see capture.ts): a change that would break running workflows fails here.
 */
const root = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(root)
  .flatMap((label) => fs.readdirSync(path.join(root, label)).map((f) => path.join(label, f)))
  .filter((f) => f.endsWith('.json'));

beforeAll(() => {
  // Replays are quiet unless something is wrong.
  Runtime.install({ logger: new DefaultLogger('WARN') });
});

describe('recorded histories', () => {
  it('exist for the run workflow and for agent workflows', () => {
    expect(files.some((f) => /run_run_[a-f0-9]+\.json$/.test(f))).toBe(true);
    expect(files.filter((f) => f.includes('_agent_')).length).toBeGreaterThanOrEqual(3);
  });

  it.each(files)('%s replays without nondeterminism', async (file) => {
    const history = JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));
    const workflowId = path.basename(file, '.json').replace(/_/g, '/').replace('run/run/', 'run/run_').replace('/agent/ag/', '/agent/ag_');
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: readTestEnv().bundlePath }, replayName: file }, history, workflowId),
    ).resolves.toBeUndefined();
  });
});
