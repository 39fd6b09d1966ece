import { randomBytes } from 'node:crypto';
import { startBridgeSim } from './index';

/** Where `npm run isphere-sim` listens unless told otherwise: beside the gateway's 8710 and the Task service's 8712. */
const DEFAULT_PORT = 8790;

/**
 * The simulator on its own: `npm run isphere-sim`, configured by the
 * environment alone. With nothing set it listens on 127.0.0.1:8790 with
 * tokens of its own, and prints what to give Dipper to use it.
 */
async function main(): Promise<void> {
  const env = process.env;
  const bridgeToken = env.DIPPER_ISPHERE_BRIDGE_TOKEN || `dbt_${randomBytes(12).toString('hex')}`;
  const controlToken = env.DIPPER_ISPHERE_SIM_CONTROL_TOKEN || `dsc_${randomBytes(12).toString('hex')}`;
  const port = Number(env.DIPPER_ISPHERE_SIM_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`DIPPER_ISPHERE_SIM_PORT must be a port number, got "${env.DIPPER_ISPHERE_SIM_PORT}"`);
  const sim = await startBridgeSim({ host: env.DIPPER_ISPHERE_SIM_HOST || '127.0.0.1', port, bridgeToken, controlToken });
  process.stdout.write(`isphere bridge simulator listening on ${sim.url}\n`);
  // Tokens it made up are shown: nobody else knows them.
  if (!env.DIPPER_ISPHERE_BRIDGE_TOKEN) process.stdout.write(`Point Dipper at it: DIPPER_ISPHERE_BRIDGE_URL=${sim.url} DIPPER_ISPHERE_BRIDGE_TOKEN=${bridgeToken}\n`);
  if (!env.DIPPER_ISPHERE_SIM_CONTROL_TOKEN) process.stdout.write(`Its control routes (/_sim/…) take: Authorization: Bearer ${controlToken}\n`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void sim.close().then(() => process.exit(0));
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`isphere bridge simulator failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
