/** The version Dipper's MCP servers and its CLI's MCP client announce. */
export const SERVER_VERSION = '0.1.0';
