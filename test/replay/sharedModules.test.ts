import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readTestEnv } from '../setup/env';

const run = promisify(execFile);

/**
 * The workflow bundle's modules are loaded once per workflow thread and shared (src/worker/bundle.ts): a workflow
 * created with the bundle the tests' worker runs evaluates none of them for itself, so it neither pays for them in
 * its first task nor keeps its own copy for as long as it stays cached. Without `preloadModules` every workflow
 * evaluates all of Dipper's modules and the SDK's index anew.
 */
it('a new workflow of each type finds every module of the bundle already loaded', async () => {
  const probe = path.join(__dirname, 'sharedModulesProbe.ts');
  const types = ['agentWorkflow', 'runWorkflow', 'questionWorkflow', 'isphereApprovalWorkflow', 'tokenRegistryWorkflow'];
  const { stdout } = await run(process.execPath, ['--import', 'tsx', probe, readTestEnv().bundlePath, ...types], { timeout: 60_000 });
  const own = JSON.parse(stdout) as Record<string, string[]>;
  expect(Object.keys(own).sort()).toEqual([...types].sort());
  for (const type of types) expect([type, own[type]]).toEqual([type, []]);
}, 90_000);
