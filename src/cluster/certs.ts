import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The files of a cluster's own CA: the server's certificate (also its internode client one) and Dipper's client certificate. */
export interface ClusterCerts {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** The name the server's certificate is for; clients check it. */
  serverName: string;
}

const SERVER_NAME = 'temporal';

/**
 * A CA of the cluster's own and the certificates signed by it, made with
 * openssl (P-256 keys): the Temporal server requires a client certificate
 * from this CA on its frontend and between its services, so a process
 * without Dipper's client key (an agent, whatever it can reach) is refused
 * at the handshake. Made once per cluster folder; kept 0600.
 */
export function ensureCerts(dir: string): ClusterCerts {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const at = (name: string) => path.join(dir, name);
  const certs: ClusterCerts = {
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    serverName: SERVER_NAME,
  };
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  // Made again, all of them, when any is missing or has less than 30 days left.
  const lasts = (file: string) => {
    try {
      openssl(['x509', '-checkend', String(30 * 24 * 3600), '-noout', '-in', file]);
      return true;
    } catch {
      return false;
    }
  };
  if ([certs.serverKey, certs.clientKey].every((f) => fs.existsSync(f)) && [certs.ca, certs.serverCert, certs.clientCert].every(lasts)) return certs;
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(['req', '-x509', ...key, '-keyout', at('ca.key'), '-out', certs.ca, '-days', '3650', '-subj', '/CN=Dipper cluster CA']);
  const signed = (name: string, subject: string, ext: string) => {
    openssl(['req', ...key, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', subject]);
    fs.writeFileSync(at(`${name}.ext`), ext);
    openssl(['x509', '-req', '-in', at(`${name}.csr`), '-CA', certs.ca, '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at(`${name}.pem`), '-days', '825', '-extfile', at(`${name}.ext`)]);
  };
  // The server's certificate is its internode client certificate too (Temporal presents it when its services call each other).
  signed('server', `/CN=${SERVER_NAME}`, `subjectAltName=DNS:${SERVER_NAME},DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n`);
  signed('client', '/CN=dipper', 'extendedKeyUsage=clientAuth\n');
  for (const f of fs.readdirSync(dir)) fs.chmodSync(at(f), 0o600);
  return certs;
}

/** What Dipper's processes (and `dipper temporal`) are given to reach the server. */
export function clientTlsEnv(c: ClusterCerts): Record<string, string> {
  return { TEMPORAL_TLS_SERVER_CA_CERT_PATH: c.ca, TEMPORAL_TLS_CLIENT_CERT_PATH: c.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: c.clientKey, TEMPORAL_TLS_SERVER_NAME: c.serverName };
}
