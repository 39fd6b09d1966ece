import path from 'node:path';
import { loadOrCreateSecrets } from '../auth/secrets';
import type { DipperConfig } from '../config';
import { type DevServer, ensureNamespace, loadTemporalDevConfig, startDevServer } from '../devstack/devServer';
import { waitForPort } from '../devstack/processes';
import { projectRoot } from './projectRoot';
import { startRun } from './startRun';
import { supervise } from './supervise';

/** `dipper up`: Temporal (bundled dev server or the configured one), then the worker and the gateway. */
export interface UpOptions {
  /** Task of the run started for you once everything is up; null starts none. */
  task: string | null;
}

export async function up(config: DipperConfig, opts: UpOptions): Promise<void> {
  const devConfig = loadTemporalDevConfig(projectRoot);
  // Before the children start, so the worker and the gateway read one secrets file rather than racing to create it.
  const { operatorToken } = loadOrCreateSecrets(config);

  let server: DevServer | undefined;
  if (config.temporal.address) {
    await ensureNamespace(config.temporal.address, config.temporal.namespace, devConfig.searchAttributes);
  } else {
    server = await startDevServer({
      projectRoot,
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      dbFile: path.join(config.dataDir, 'temporal.db'),
      logFile: path.join(config.dataDir, 'temporal.log'),
      namespace: config.temporal.namespace,
    });
  }

  // Absolute paths, so the children resolve the same folders whatever their working directory.
  const env = { ...process.env, DIPPER_DATA_DIR: config.dataDir, DIPPER_SKILLS_DIR: config.skillsDir };
  const children = [
    supervise('worker', ['--import', 'tsx', 'src/worker/main.ts'], env),
    supervise('gateway', ['--import', 'tsx', 'src/gateway/main.ts'], env),
  ];

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      process.stderr.write('dipper: second signal; exiting now\n');
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`dipper: ${signal}; stopping the gateway, the worker and Temporal\n`);
    // The children first, so the worker does not lose its server while draining.
    await Promise.all(children.map((child) => child.stop()));
    await server?.stop();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal));

  const probeHost = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host;
  if (!(await waitForPort(config.port, probeHost, 60_000))) {
    process.stderr.write(`dipper: the gateway is not listening on ${probeHost}:${config.port} yet; its output above may say why\n`);
  }
  if (stopping) return;
  process.stdout.write(banner(config, operatorToken, server ? server.uiUrl ?? 'headless' : 'external server'));
  // A run ready to drive: paste its MCP config into Claude Code or the MCP Inspector and you are its root agent.
  if (opts.task !== null) {
    process.stdout.write('A run for you to drive as its root agent:\n');
    await startRun(config, opts.task);
  }
}

function banner(config: DipperConfig, operatorToken: string, temporalUi: string): string {
  const api = `${config.publicUrl}/api`;
  return [
    '',
    'Dipper is up.',
    `  MCP endpoint (beidou): ${config.publicUrl}/mcp/beidou`,
    `  Operator API:          ${api}`,
    `  Temporal UI:           ${temporalUi}`,
    `  Operator token:        ${operatorToken}`,
    '',
    'Start a run:',
    '  npm run dipper -- start-run --task "Describe the work"',
    'or:',
    `  curl -X POST ${api}/runs -H "Authorization: Bearer ${operatorToken}" \\`,
    `    -H 'Content-Type: application/json' -d '{"task": "Describe the work"}'`,
    '',
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}
