import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import http from 'node:http';
import { Connection } from '@temporalio/client';
import type { ClusterRecord } from '../../src/cluster/cluster';
import { sdkTls, tlsFromEnv } from '../../src/temporal/tls';

/**
 * Run by `dipper cluster test` only: the production server takes a client
 * only with a certificate of the cluster's CA (temporal-config/cluster,
 * src/cluster/certs.ts). A process that reaches its frontend (an agent
 * that found it) gets nowhere without Dipper's client key, over gRPC or
 * HTTP. (The services' membership and metrics ports stay plain text on
 * loopback, where the agents' fence keeps agents away.)
 */
const recordFile = process.env.DIPPER_TEST_CLUSTER;
const maybe = recordFile ? describe : describe.skip;

maybe("the cluster's Temporal server", () => {
  const record = recordFile ? (JSON.parse(fs.readFileSync(recordFile, 'utf8')) as ClusterRecord) : undefined;
  const tls = record ? tlsFromEnv(record.temporalTls)! : undefined;

  /** Whether a client of these options lists the namespace's workflows; the refusal's text when it cannot. */
  async function lists(options: Parameters<typeof Connection.connect>[0]): Promise<true | string> {
    try {
      const connection = await Connection.connect({ ...options, connectTimeout: '5s' });
      try {
        await connection.workflowService.listWorkflowExecutions({ namespace: 'dipper', pageSize: 1 });
        return true;
      } finally {
        await connection.close();
      }
    } catch (err) {
      return String((err as Error).message).slice(0, 200);
    }
  }

  it('serves a client with Dipper\'s certificate, and refuses one without, in plain text or TLS, over gRPC', async () => {
    const address = record!.temporalAddress;
    // The positive sign: the same call with the cluster's client certificate works.
    expect(await lists({ address, ...sdkTls(tls) })).toBe(true);
    // Plain gRPC, as an agent with @temporalio/client would try first.
    expect(await lists({ address })).not.toBe(true);
    // TLS that trusts the server but presents no certificate.
    expect(await lists({ address, tls: { serverRootCACertificate: tls!.ca, serverNameOverride: tls!.serverName } })).not.toBe(true);
    // A certificate an agent could make itself: valid, but not of the cluster's CA.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-stranger-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem'), '-days', '1', '-subj', '/CN=dipper'], { stdio: 'ignore' });
    const stranger = { crt: fs.readFileSync(path.join(dir, 'c.pem')), key: fs.readFileSync(path.join(dir, 'k.pem')) };
    fs.rmSync(dir, { recursive: true, force: true });
    expect(await lists({ address, tls: { serverRootCACertificate: tls!.ca, serverNameOverride: tls!.serverName, clientCertPair: stranger } })).not.toBe(true);
  });

  it('refuses the HTTP API without a client certificate, and serves it with one', async () => {
    const [host, port] = record!.temporalHttpAddress.split(':');
    const get = (mod: typeof http | typeof https, options: https.RequestOptions) =>
      new Promise<number | string>((resolve) => {
        const req = mod.get({ host, port: Number(port), path: '/api/v1/namespaces/dipper/workflows', timeout: 5000, ...options }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
        req.on('timeout', () => req.destroy(new Error('timeout')));
      });
    expect(await get(https, { ca: tls!.ca, cert: tls!.cert, key: tls!.key, servername: tls!.serverName })).toBe(200);
    expect(await get(http, {})).not.toBe(200);
    expect(await get(https, { ca: tls!.ca, servername: tls!.serverName })).not.toBe(200);
  });
});
