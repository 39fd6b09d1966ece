import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MissingCredentialContext, NotSent, OutcomeUnknown, TaskApiClient } from '../../src/common/taskApi/client';
import { startTaskService } from '../../src/taskservice';
import { TaskProxy } from '../support/taskProxy';

/** The Task API client against the real reference service, through a proxy that counts and misbehaves on cue. */
const adminKey = 'dtk_unit_admin';
let service: { url: string; close(): Promise<void> };
let proxy: TaskProxy;
let client: TaskApiClient;
const agent = { agentId: 'ag_000000000001', channels: ['run_unit'] };

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-taskapi-'));
  service = await startTaskService({ dbFile: path.join(dir, 'tasks.db'), adminKey });
  proxy = new TaskProxy(service.url);
  client = new TaskApiClient({ baseUrl: await proxy.start(), workspace: 'unit', adminKey, requestTimeoutMs: 1000 });
});

afterAll(async () => {
  await proxy.stop();
  await service.close();
});

it('refuses a call without workspace or agent before any request leaves', async () => {
  const before = proxy.seen.length;
  const noWorkspace = new TaskApiClient({ baseUrl: 'http://127.0.0.1:9', workspace: '', adminKey, requestTimeoutMs: 1000 });
  await expect(noWorkspace.request({ op: 'list', agent, body: { channel: 'run_unit' } })).rejects.toBeInstanceOf(MissingCredentialContext);
  await expect(client.request({ op: 'list', agent: { agentId: '', channels: [] }, body: { channel: 'run_unit' } })).rejects.toBeInstanceOf(MissingCredentialContext);
  expect(proxy.seen.length).toBe(before);
});

it('issues a token once, then makes exactly one request per call', async () => {
  const from = proxy.seen.length;
  for (let i = 0; i < 3; i++) expect((await client.request({ op: 'list', agent, body: { channel: 'run_unit' } })).ok).toBe(true);
  const paths = proxy.seen.slice(from).map((s) => s.path.split('?')[0].replace(/.*\/agents\/[^/]+/, ''));
  expect(paths).toEqual(['/tokens', '/runtime/tasks', '/runtime/tasks', '/runtime/tasks']);
});

it('after a 401 refreshes once and repeats once; a second 401 is the answer, with no third try', async () => {
  proxy.expireNext();
  let from = proxy.seen.length;
  expect((await client.request({ op: 'list', agent, body: { channel: 'run_unit' } })).ok).toBe(true);
  expect(proxy.seen.slice(from).map((s) => s.status)).toEqual([401, 200, 200]);

  // Both the request and its one repeat refused: the caller gets the 401.
  proxy.expireNext(2);
  from = proxy.seen.length;
  const out = await client.request({ op: 'list', agent, body: { channel: 'run_unit' } });
  expect(out).toMatchObject({ ok: false, status: 401 });
  expect(proxy.runtime().slice(-2).map((s) => s.status)).toEqual([401, 401]);
  expect(proxy.seen.slice(from).filter((s) => s.path.includes('/runtime/'))).toHaveLength(2);
});

it('tells a request that never left from one whose answer never came', async () => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const nowhere = new TaskApiClient({ baseUrl: `http://127.0.0.1:${port}`, workspace: 'unit', adminKey, requestTimeoutMs: 1000 });
  await expect(nowhere.request({ op: 'list', agent, body: { channel: 'run_unit' } })).rejects.toBeInstanceOf(NotSent);

  proxy.swallowNext('/add-checkpoint');
  const made = await client.request({ op: 'create', agent, body: { channel: 'run_unit', tasks: [{ title: 't' }] } });
  const number = ((made as { body: { tasks: { number: number }[] } }).body.tasks[0]).number;
  await expect(client.request({ op: 'checkpoint', agent, body: { channel: 'run_unit', number, summary: 'lost answer' } })).rejects.toBeInstanceOf(OutcomeUnknown);
});
