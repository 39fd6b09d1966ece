import { startBridgeSim } from './index';

/** The simulator on its own: `tsx src/isphere/bridgeSim/main.ts`, configured by the environment alone. */
async function main(): Promise<void> {
  const env = process.env;
  const bridgeToken = env.DIPPER_ISPHERE_BRIDGE_TOKEN;
  const controlToken = env.DIPPER_ISPHERE_SIM_CONTROL_TOKEN;
  if (!bridgeToken) throw new Error('DIPPER_ISPHERE_BRIDGE_TOKEN is required');
  if (!controlToken) throw new Error('DIPPER_ISPHERE_SIM_CONTROL_TOKEN is required');
  const port = Number(env.DIPPER_ISPHERE_SIM_PORT || '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`DIPPER_ISPHERE_SIM_PORT must be a port number, got "${env.DIPPER_ISPHERE_SIM_PORT}"`);
  const sim = await startBridgeSim({ host: env.DIPPER_ISPHERE_SIM_HOST || '127.0.0.1', port, bridgeToken, controlToken });
  process.stdout.write(`isphere bridge simulator listening on ${sim.url}\n`);
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
