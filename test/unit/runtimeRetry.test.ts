import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runtimeRequest } from '../../src/runtime/retry';

/** A real HTTP server answering from a script of statuses, counting requests. */
async function serve(script: { status: number; headers?: Record<string, string> }[]): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    const step = script[Math.min(hits++, script.length - 1)];
    res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
    res.end(JSON.stringify({ ok: step.status === 200 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/inbox`, hits: () => hits, close: () => new Promise((r) => server.close(() => r())) };
}

describe("the reference runtime's requests", () => {
  it('wait out 503 and 429 with Retry-After, then succeed', async () => {
    const s = await serve([{ status: 503, headers: { 'retry-after': '0' } }, { status: 429, headers: { 'retry-after': '0' } }, { status: 200 }]);
    await expect(runtimeRequest('t', 'GET', s.url)).resolves.toEqual({ ok: true });
    expect(s.hits()).toBe(3);
    await s.close();
  });

  it('give up at once on a final answer: 409 superseded, 401, and 500 without Retry-After (needs_repair)', async () => {
    for (const status of [409, 401, 500]) {
      const s = await serve([{ status }, { status: 200 }]);
      await expect(runtimeRequest('t', 'GET', s.url)).rejects.toThrow(String(status));
      expect(s.hits()).toBe(1);
      await s.close();
    }
  });

  it('stop after the retry budget', async () => {
    const s = await serve([{ status: 503, headers: { 'retry-after': '0' } }]);
    await expect(runtimeRequest('t', 'GET', s.url, undefined, 2)).rejects.toThrow('503');
    expect(s.hits()).toBe(3);
    await s.close();
  });
});
