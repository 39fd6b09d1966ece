import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, temporalTarget } from '../../src/config';
import { sdkTls, tlsFromEnv } from '../../src/temporal/tls';

describe('TLS to Temporal', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-tls-'));
  const file = (name: string) => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, `-----${name}-----`);
    return at;
  };
  const env = { TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem'), TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem'), TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key') };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reads the Temporal CLI's variables, all three files or none", () => {
    expect(tlsFromEnv({})).toBeUndefined();
    const tls = tlsFromEnv({ ...env, TEMPORAL_TLS_SERVER_NAME: 'temporal' })!;
    expect([tls.ca.toString(), tls.cert.toString(), tls.key.toString(), tls.serverName]).toEqual(['-----ca.pem-----', '-----client.pem-----', '-----client.key-----', 'temporal']);
    expect(sdkTls(tls)).toEqual({ tls: { serverRootCACertificate: tls.ca, clientCertPair: { crt: tls.cert, key: tls.key }, serverNameOverride: 'temporal' } });
    expect(() => tlsFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: env.TEMPORAL_TLS_CLIENT_CERT_PATH })).toThrow(/go together/);
    expect(() => tlsFromEnv({ ...env, TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'missing.key') })).toThrow(/TEMPORAL_TLS_CLIENT_KEY_PATH: cannot read/);
  });

  it('speaks TLS only to a server Dipper did not start', () => {
    expect(temporalTarget(loadConfig({ ...env, TEMPORAL_ADDRESS: 'temporal.internal:7233' })).tls?.cert.toString()).toBe('-----client.pem-----');
    // The dev server of `npm start` listens on loopback in plain gRPC.
    expect(temporalTarget(loadConfig({ ...env })).tls).toBeUndefined();
  });
});
