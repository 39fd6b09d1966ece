import net from 'node:net';

/**
 * A destination as an operator writes it in a runtime's `network.allow`:
 * `host:port`, `[v6]:port`, an address, or a network `10.0.0.0/8` (any
 * port). Returns null for anything else, so config can name the entry.
 */
export function parseDestination(text: string): { host: string; prefix?: number; port?: number } | null {
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed) return net.isIP(bracketed[1]) ? withPort({ host: bracketed[1] }, bracketed[2]) : null;
  const network = /^([0-9A-Fa-f:.]+)\/(\d{1,3})$/.exec(text);
  if (network) {
    const family = net.isIP(network[1]);
    const prefix = Number(network[2]);
    return family && prefix <= (family === 4 ? 32 : 128) ? { host: network[1], prefix } : null;
  }
  if (net.isIPv6(text)) return { host: text };
  const hostPort = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(text);
  return hostPort ? withPort({ host: hostPort[1] }, hostPort[2]) : null;
}

function withPort(d: { host: string }, port: string | undefined): { host: string; port?: number } | null {
  if (port === undefined) return d;
  const n = Number(port);
  return n >= 1 && n <= 65535 ? { ...d, port: n } : null;
}
