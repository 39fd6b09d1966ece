import { Client, Connection } from '@temporalio/client';
import type { Server } from 'node:http';
import { EventStore } from '../../activities/eventStore';
import { loadOrCreateSecrets } from '../auth/secrets';
import { temporalAddress, type DipperConfig } from '../config';
import { createLogger } from '../log';
import { paths } from '../paths';
import { SkillCatalog } from '../skills';
import { createApp } from './app';
import { TeamClient } from './teamClient';

export interface GatewayHandle {
  url: string;
  close(): Promise<void>;
}

/** Starts the HTTP gateway: MCP endpoints, the runtime inbox and the operator API. */
export async function startGateway(config: DipperConfig): Promise<GatewayHandle> {
  const log = createLogger(config, 'gateway');
  const secrets = loadOrCreateSecrets(config);
  const connection = await Connection.connect({ address: temporalAddress(config) });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const events = new EventStore(paths.events(config.dataDir));
  const app = createApp({
    config,
    operatorToken: secrets.operatorToken,
    tokenSecret: secrets.tokenSecret,
    team: new TeamClient(client, log),
    skills: new SkillCatalog(config.skillsDir),
    events,
    log,
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port }, 'gateway listening');
  return {
    url: `http://${config.host}:${port}`,
    close: async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      events.close();
      await connection.close();
    },
  };
}
