/** The version Dipper's MCP servers and its CLI's MCP client announce. */
export const SERVER_VERSION = '0.1.0';

/**
 * The production Temporal server `dipper cluster` runs, built from its Go
 * module (src/cluster/temporalServer.ts): the release the dev server of the
 * pinned CLI embeds (TEMPORAL_CLI_VERSION), so tests and the cluster run one
 * server version, and the one a worker checks the server it meets against.
 * test/devstack.test.ts holds the two (and docker-compose.yml) together.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.32.0';
