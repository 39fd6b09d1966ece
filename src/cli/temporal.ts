import { spawn } from 'node:child_process';
import { type DipperConfig, temporalAddress } from '../config';
import { ensureTemporalCli } from '../devstack/temporalCli';
import { projectRoot } from '../common/projectRoot';

/**
 * `dipper temporal <args>`: the bundled Temporal CLI, pointed at the stack's
 * server and namespace. It reads TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE as
 * it would its --address and --namespace flags, which still win when given.
 */
export async function runTemporalCli(config: DipperConfig, args: string[]): Promise<number> {
  const bin = await ensureTemporalCli(projectRoot);
  const env = { ...process.env, TEMPORAL_ADDRESS: temporalAddress(config), TEMPORAL_NAMESPACE: config.temporal.namespace };
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: 'inherit', env });
    child.once('error', reject);
    // Killed by a signal counts as a failure, like a shell's 128+n.
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
