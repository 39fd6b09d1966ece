import fs from 'node:fs';

/**
 * Mutual TLS to a Temporal server that requires it (the production
 * topology as `dipper cluster` runs it): the CA that signed the
 * server's certificate, and the client certificate and key that Dipper's
 * processes present. The variables are the Temporal CLI's own
 * (TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH,
 * TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_NAME), so
 * `dipper temporal` passes them on unchanged.
 */
export interface TemporalTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  serverName?: string;
}

/** Where a process reaches Temporal: the address, and the TLS it speaks there (none on the dev server). */
export interface TemporalTarget {
  address: string;
  tls?: TemporalTls;
}

/** The TLS files named by the environment; none named is plain gRPC; a half-named set is refused. */
export function tlsFromEnv(env: Record<string, string | undefined>): TemporalTls | undefined {
  const files = { ca: env.TEMPORAL_TLS_SERVER_CA_CERT_PATH, cert: env.TEMPORAL_TLS_CLIENT_CERT_PATH, key: env.TEMPORAL_TLS_CLIENT_KEY_PATH };
  const named = Object.entries(files).filter(([, v]) => v);
  if (named.length === 0) return undefined;
  if (named.length < 3) {
    throw new Error('TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: the server\'s CA, and the client certificate and key Dipper presents');
  }
  const read = (name: string, file: string) => {
    try {
      return fs.readFileSync(file);
    } catch {
      throw new Error(`${name}: cannot read ${file}`);
    }
  };
  return {
    ca: read('TEMPORAL_TLS_SERVER_CA_CERT_PATH', files.ca!),
    cert: read('TEMPORAL_TLS_CLIENT_CERT_PATH', files.cert!),
    key: read('TEMPORAL_TLS_CLIENT_KEY_PATH', files.key!),
    ...(env.TEMPORAL_TLS_SERVER_NAME ? { serverName: env.TEMPORAL_TLS_SERVER_NAME } : {}),
  };
}

/** The SDK's TLS option for a connection (the client's and the worker's native one take the same shape). */
export function sdkTls(tls: TemporalTls | undefined) {
  if (!tls) return {};
  return {
    tls: {
      serverRootCACertificate: tls.ca,
      clientCertPair: { crt: tls.cert, key: tls.key },
      ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
    },
  };
}
