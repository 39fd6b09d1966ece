import { Client, Connection } from '@temporalio/client';
import fs from 'node:fs';
import path from 'node:path';
import { expiryOf, mintAgentToken } from '../../src/auth/tokens';
import { startDevServer, type DevServer } from '../../src/devstack/devServer';
import { isListening } from '../../src/devstack/processes';
import { agentWorkflowId } from '../../workflows/ids';
import { readTestEnv, testDataRoot } from '../setup/env';
import { AgentClient, Operator, eventually } from '../support/clients';
import { projectRoot } from '../support/processes';
import { startStack, type Stack } from '../support/stack';

/**
 * Answers during outages, on a stack of its own around a private Temporal
 * dev server that the tests break step by step: a workflow whose task
 * always fails, then the worker, then Temporal itself.
 */

// Below Linux's ephemeral range (32768 and up): an outgoing connection elsewhere on the machine cannot be holding them.
// The dev server also binds its UI and HTTP ports just above port + 1000.
const TEMPORAL_PORT = 26791;
const GATEWAY_PORT = 28731;
const CALL_TIMEOUT_MS = 2000;

const base = readTestEnv();
let temporal: DevServer;
let stack: Stack;
let connection: Connection;
let client: Client;
let run: { run_id: string; root: { agent_id: string; agent_token: string } };
let root: AgentClient;
/** A root on the shared test stack, which stays healthy throughout: its long polls are this file's reference clock. */
let reference: { root: { agent_token: string } };

beforeAll(async () => {
  temporal = await startDevServer({
    projectRoot,
    port: TEMPORAL_PORT,
    uiPort: TEMPORAL_PORT + 1000,
    headless: true,
    logFile: path.join(testDataRoot, 'outage-temporal.log'),
  });
  expect(temporal.reused).toBe(false);
  stack = await startStack('outage', GATEWAY_PORT, { TEMPORAL_ADDRESS: temporal.address, DIPPER_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS) });
  connection = await Connection.connect({ address: temporal.address });
  client = new Client({ connection, namespace: base.namespace });
  run = await stack.operator.startRun('Survive outages.');
  root = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
  reference = await new Operator(base).startRun('Keep the time for outages.');
}, 120_000);

afterAll(async () => {
  await root?.close().catch(() => undefined);
  await connection?.close().catch(() => undefined);
  await stack?.stop();
  await temporal?.stop();
});

/**
 * Runs a call and checks that the outage gateway's own call deadline answered it: the answer arrives before a long
 * poll of twice the call timeout, sent just after the call to the healthy shared gateway, is released by that
 * gateway's clock. A call left to Temporal's deadlines (or to none, or to the 15 s default) answers after it. The
 * test's own clock judges nothing, so a test process slowed by a busy machine does not fail it.
 */
async function bounded<T>(call: () => Promise<T>): Promise<T> {
  let released = false;
  const left = new AbortController();
  const out = call();
  const window = fetch(`${base.gatewayUrl}/api/runtime/inbox?cursor=0&wait_ms=${2 * CALL_TIMEOUT_MS}`, {
    headers: { authorization: `Bearer ${reference.root.agent_token}` },
    signal: left.signal,
  })
    .then(() => (released = true))
    .catch(() => undefined);
  const answer = await out;
  expect(released).toBe(false);
  left.abort();
  await window;
  return answer;
}

async function runtime(method: 'GET' | 'POST', token: string) {
  const url = method === 'GET' ? `${stack.gatewayUrl}/api/runtime/inbox?cursor=0&wait_ms=0` : `${stack.gatewayUrl}/api/runtime/inbox/ack`;
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify({ up_to: 0 }) } : {}),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

describe('an agent whose workflow task fails on every attempt', () => {
  const brokenId = 'ag_badbadbad000';
  let broken: AgentClient;
  let token: string;

  beforeAll(async () => {
    // The real agent workflow, started with an input it cannot read: its first task throws, and so does every retry.
    const workflowId = agentWorkflowId(run.run_id, brokenId);
    await client.workflow.start('agentWorkflow', { taskQueue: 'dipper-outage', workflowId, args: [{}] });
    await eventually(async () => {
      const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: base.namespace,
        execution: { workflowId },
        maximumPageSize: 10,
      });
      return page.history?.events?.some((e) => e.workflowTaskFailedEventAttributes) ? true : undefined;
    });
    token = mintAgentToken(base.tokenSecret, { run_id: run.run_id, agent_id: brokenId, gen: 1, exp: expiryOf(Date.now(), 3600) });
    broken = await AgentClient.connect(stack.gatewayUrl, token);
  });

  afterAll(() => broken?.close());

  it.each([
    ['a read (Query)', 'list_ready', {}],
    ['a change (Update)', 'signal_review', { detail: '[REVIEW REQUIRED] done' }],
  ])('answers %s with needs_repair, not retryable', async (_what, tool, args) => {
    const error = await bounded(() => broken.fail(tool, args));
    expect(error).toMatchObject({ code: 'needs_repair', retryable: false, agent_id: brokenId });
  });

  it('tells a sender which recipient needs repair', async () => {
    const error = await bounded(() => root.fail('send_message', { to: brokenId, content: 'are you there?' }));
    expect(error).toMatchObject({ code: 'needs_repair', retryable: false, agent_id: brokenId });
  });

  it.each(['GET', 'POST'] as const)('answers the runtime inbox %s with 500 needs_repair and no Retry-After', async (method) => {
    const res = await bounded(() => runtime(method, token));
    expect(res.status).toBe(500);
    expect(res.retryAfter).toBeNull();
    expect(res.body.error).toMatchObject({ code: 'needs_repair', retryable: false });
  });
});

describe('with the worker down', () => {
  beforeAll(async () => {
    // A read that works first: the failures below are the worker's absence, nothing else.
    expect((await root.ok('list_peers', { scope: 'all' })).peers).toHaveLength(1);
    await stack.worker.kill('SIGKILL');
  });

  it('answers a read (Query) with a retryable unavailable within the call timeout', async () => {
    const error = await bounded(() => root.fail('list_peers', { scope: 'all' }));
    expect(error).toMatchObject({ code: 'unavailable', retryable: true, retry_after_ms: expect.any(Number) });
  });

  it('answers a change with outcome_unknown within the call timeout (or unavailable if it never left the gateway)', async () => {
    const error = await bounded(() => root.fail('signal_review', { detail: '[REVIEW REQUIRED] done' }));
    // The Update reached Temporal, which holds it for the next worker: the change may yet be made
    // (test/durability/workerCrash.test.ts shows it made). Tokens are still confirmed without the worker (the shared
    // revocations table decides), so the call is never refused before the tool runs.
    expect(error).toMatchObject({ code: 'outcome_unknown', retryable: false, retry_after_ms: expect.any(Number) });
  });

  it.each(['GET', 'POST'] as const)('answers the runtime inbox %s with 503 and Retry-After', async (method) => {
    const res = await bounded(() => runtime(method, run.root.agent_token));
    expect(res.status).toBe(503);
    expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(res.body.error).toMatchObject({ code: 'unavailable', retryable: true });
  });
});

describe('with Temporal down', () => {
  beforeAll(async () => {
    process.kill(temporal.pid!, 'SIGKILL');
    await eventually(async () => ((await isListening(TEMPORAL_PORT)) ? undefined : true));
  });

  it('answers a tool call with a retryable unavailable within the call timeout', async () => {
    const error = await bounded(() => root.fail('list_peers', { scope: 'all' }));
    expect(error).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it.each(['GET', 'POST'] as const)('answers the runtime inbox %s with 503 and Retry-After', async (method) => {
    const res = await bounded(() => runtime(method, run.root.agent_token));
    expect(res.status).toBe(503);
    expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(res.body.error).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('answers the operator starting a run with 503 and Retry-After', async () => {
    const res = await bounded(() => stack.operator.request('POST', '/runs', { task: 'Not now.' }));
    expect(res.status).toBe(503);
    expect(res.json.error).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('logged the outage without stacks, tokens or Temporal run ids', () => {
    const log = fs.readFileSync(path.join(testDataRoot, 'outage-gateway.log'), 'utf8');
    expect(log).toMatch(/did not answer in time/);
    expect(log).toMatch(/needs repair/);
    expect(log).not.toMatch(/\n\s+at /);
    expect(log).not.toMatch(/\bdp[ao]_[A-Za-z0-9]/);
    expect(log).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
  });
});
