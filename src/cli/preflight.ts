import type { DipperConfig } from '../config';
import { listenError } from '../devstack/processes';
import type { StackRecord } from './stackRecord';

/**
 * Why `dipper up` must not start, or undefined. Checked before anything
 * starts: a Temporal server already on the port is never silently reused
 * (only TEMPORAL_ADDRESS says to use one), and a gateway port in use would
 * only crash-loop the gateway.
 */
export async function whyUpCannotStart(config: DipperConfig, running: StackRecord | undefined): Promise<string | undefined> {
  const bundled = !config.temporal.address;
  if (running && clashes(config, running)) {
    return (
      `Dipper is already running (pid ${running.pid}): gateway ${running.gatewayUrl}, Temporal ${running.temporal.address}, ` +
      `data ${running.dataDir}. Stop it first (Ctrl-C in its terminal, or kill ${running.pid}); ` +
      '`npm run dipper -- status` shows it.'
    );
  }
  const ports: [number, string, string, string][] = [[config.port, config.host, 'the gateway', 'DIPPER_PORT']];
  if (bundled) {
    ports.push([config.temporal.devPort, '127.0.0.1', 'the Temporal dev server', 'DIPPER_TEMPORAL_DEV_PORT']);
    ports.push([config.temporal.uiPort, '127.0.0.1', 'the Temporal UI', 'DIPPER_TEMPORAL_UI_PORT']);
  }
  for (const [port, host, what, variable] of ports) {
    const error = await listenError(port, host);
    if (error === undefined) continue;
    const held = error === 'EADDRINUSE' ? 'is in use by another program' : `cannot be used (${error})`;
    const hint =
      variable === 'DIPPER_TEMPORAL_DEV_PORT'
        ? `, or set TEMPORAL_ADDRESS=127.0.0.1:${port} to use the Temporal server listening there`
        : '';
    return `Port ${port} on ${host}, for ${what}, ${held}. Stop that program or set ${variable} to a free port${hint}.`;
  }
  return undefined;
}

/** Two stacks cannot share a data folder (one SQLite file, one set of agent processes) or a port. */
function clashes(config: DipperConfig, running: StackRecord): boolean {
  const bundled = !config.temporal.address;
  return (
    running.dataDir === config.dataDir ||
    running.port === config.port ||
    (bundled && running.temporal.address === `127.0.0.1:${config.temporal.devPort}`)
  );
}
