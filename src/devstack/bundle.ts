import { bundleWorkflowCode } from '@temporalio/worker';
import fs from 'node:fs';
import { workflowBundleOptions } from '../worker/bundle';

const quietLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => process.stderr.write(`bundle: ${m}\n`),
  error: (m: string) => process.stderr.write(`bundle: ${m}\n`),
  log: () => undefined,
};

/**
 * Bundles Dipper's workflows once into a file, for several workers (tests,
 * benches) to load with DIPPER_WORKFLOW_BUNDLE instead of each bundling again.
 */
export async function writeWorkflowBundle(file: string): Promise<void> {
  const { code } = await bundleWorkflowCode(workflowBundleOptions({ logger: quietLogger }));
  fs.writeFileSync(file, code);
}
