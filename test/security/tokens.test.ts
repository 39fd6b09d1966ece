import fs from 'node:fs';
import path from 'node:path';
import { expiryOf, mintAgentToken, verifyAgentToken } from '../../src/auth/tokens';
import { readTestEnv, testDataRoot } from '../setup/env';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { temporalForFile } from '../support/temporal';
import { agentWorkflowId } from '../../workflows/ids';
import { runtimeExitedSignal } from '../../workflows/agent/messages';

/**
 * Tokens belong to a launch and die with it, on every replica. A stack of
 * its own (its own task queue, so its own token registry) with two gateway
 * replicas; agents of the `worker` skill run a command that records its
 * token and crashes once, so the agent is launched a second time.
 */
/**
 * What is guaranteed: a token dies on every replica before the answer that
 * retires it (the ack that ends its agent, the relaunch's new token, the
 * operator's revoke), since each replica reads the shared revocations table
 * at every check. So each test calls with the old token right after that
 * answer, with no wait, on the other replica first.
 */
const base = readTestEnv();
const tokensFile = path.join(testDataRoot, 'tokens-seen.txt');
// First launch: note the token and crash. Second: note it and stay up.
const flaky = 'echo "$DIPPER_AGENT_TOKEN" >> "$TOKENS_FILE"; [ "$(wc -l < "$TOKENS_FILE")" -ge 2 ] && exec sleep 300; exit 3';

let stack: Stack;
let replicas: string[];
const clients: AgentClient[] = [];
const temporal = temporalForFile();

beforeAll(async () => {
  fs.rmSync(tokensFile, { force: true });
  stack = await startStack('tokens', 28810, {
    DIPPER_RUNTIMES: JSON.stringify({
      default: { kind: 'none' },
      skills: { worker: { kind: 'command', command: ['/bin/sh', '-c', flaky], env: { TOKENS_FILE: tokensFile } } },
    }),
    DIPPER_REVOCATION_STALE_MS: '1500',
  });
  replicas = [stack.gatewayUrl, await stack.addGateway(28811)];
}, 60_000);

const runs: string[] = [];

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
  // Agent runtimes are detached by design and outlive their stack; the ones this test started are its to end.
  for (const runId of runs) {
    const agents = path.join(base.dataDir, 'runs', runId, 'agents');
    for (const agent of fs.existsSync(agents) ? fs.readdirSync(agents) : []) {
      const pidFile = path.join(agents, agent, 'runtime.pid');
      if (!fs.existsSync(pidFile)) continue;
      try {
        process.kill(-Number(fs.readFileSync(pidFile, 'utf8').split(' ')[0]), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});

async function connect(token: string, url = stack.gatewayUrl): Promise<AgentClient> {
  const c = await AgentClient.connect(url, token);
  clients.push(c);
  return c;
}

/** The runtime inbox, read with a token on one replica: its status and error code. */
async function inboxAt(url: string, token: string): Promise<{ status: number; code?: string; message?: string }> {
  const res = await fetch(`${url}/api/runtime/inbox?cursor=0&wait_ms=0`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { error?: { code: string; message: string } };
  return { status: res.status, code: body.error?.code, message: body.error?.message };
}

/** A tools/call over MCP with a token on one replica, as a stateless client sends it. */
async function toolCallAt(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/mcp/beidou`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_peers', arguments: {} } }),
  });
  await res.text();
  return res.status;
}

/**
 * The token's standing at one replica on both doors, by requests that need
 * no Temporal round trip (a tools/list, an inbox read with a malformed
 * cursor): authentication answers them, so a probe never waits behind a
 * Query to a busy agent and the figure is the replica's own. A valid token
 * gets 200 and 400; a revoked one 401 on both.
 */
async function refusedAt(url: string, token: string): Promise<boolean> {
  const headers = { authorization: `Bearer ${token}` };
  const [inbox, mcp] = await Promise.all([
    fetch(`${url}/api/runtime/inbox?cursor=not-a-number`, { headers }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { code: string } } })),
    fetch(`${url}/mcp/beidou`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    }).then(async (r) => (await r.text(), r.status)),
  ]);
  return inbox.status === 401 && inbox.body.error?.code === 'token_revoked' && mcp === 401;
}

/** The very next calls with the token, on the second replica and then the first, are refused as revoked on both doors. */
async function refusedEverywhereAtOnce(token: string): Promise<void> {
  for (const url of [...replicas].reverse()) {
    expect([url, await refusedAt(url, token)]).toEqual([url, true]);
    expect(await inboxAt(url, token)).toMatchObject({ status: 401, code: 'token_revoked' });
    expect(await toolCallAt(url, token)).toBe(401);
  }
}

async function startRun(): Promise<{ runId: string; rootId: string; rootToken: string; root: AgentClient }> {
  const run = await stack.operator.startRun('Hold tokens.');
  runs.push(run.run_id);
  return { runId: run.run_id, rootId: run.root.agent_id, rootToken: run.root.agent_token, root: await connect(run.root.agent_token) };
}

async function spawnChild(root: AgentClient, skill: string): Promise<string> {
  const id = `t${Math.random().toString(36).slice(2, 8)}`;
  await root.ok('declare_plan', { tasks: [{ id, role: `${id}-role`, skill, task: `Do ${id}.`, depends_on: [] }] });
  return (await root.ok('spawn_agent', { task_id: id })).agent_id as string;
}

it('hands out the current launch\'s token, the same one on every call', async () => {
  const { runId, rootId } = await startRun();
  const first = await stack.operator.launch(runId, rootId);
  const again = await stack.operator.launch(runId, rootId);
  expect(again.token).toBe(first.token);
  expect(verifyAgentToken([base.tokenSecret], first.token)).toMatchObject({ run_id: runId, agent_id: rootId, gen: 1 });
  for (const url of replicas) expect((await inboxAt(url, first.token)).status).toBe(200);
});

it('refuses an older generation\'s token on both replicas as soon as the relaunch\'s token exists', async () => {
  const { root, runId } = await startRun();
  const childId = await spawnChild(root, 'worker');
  const [older, current] = await eventually(async () => {
    const lines = fs.existsSync(tokensFile) ? fs.readFileSync(tokensFile, 'utf8').split('\n').filter(Boolean) : [];
    return lines.length >= 2 ? lines : undefined;
  }, 30_000, 10);
  // The second process has its token: the older one is refused from now on, everywhere.
  await refusedEverywhereAtOnce(older);
  expect(verifyAgentToken([base.tokenSecret], older)).toMatchObject({ agent_id: childId, gen: 1 });
  expect(verifyAgentToken([base.tokenSecret], current)).toMatchObject({ agent_id: childId, gen: 2 });
  for (const url of replicas) expect((await inboxAt(url, current)).status).toBe(200);
  // The operator API hands out the live generation, not a new one.
  expect((await stack.operator.launch(runId, childId)).token).toBe(current);
});

it('refuses an older generation\'s token on both replicas as soon as the launch API hands out the next one', async () => {
  const { root, runId } = await startRun();
  // A `none` runtime: whoever acts as the agent takes its token from the launch API.
  const childId = await spawnChild(root, 'reviewer');
  const older = (await stack.operator.launch(runId, childId)).token as string;
  // Its runtime is gone, as a worker reports a crash: the agent is launched again, as generation 2.
  await temporal.client.workflow.getHandle(agentWorkflowId(runId, childId)).signal(runtimeExitedSignal, { code: 1, signal: null, stderr_tail: [] });
  const current = await eventually(async () => {
    const token = (await stack.operator.launch(runId, childId)).token as string;
    return token !== older ? token : undefined;
  }, 20_000, 10);
  await refusedEverywhereAtOnce(older);
  expect(verifyAgentToken([base.tokenSecret], current)).toMatchObject({ agent_id: childId, gen: 2 });
  for (const url of replicas) expect((await inboxAt(url, current)).status).toBe(200);
});

it('refuses a terminated agent\'s token on both replicas, and hands it no new one', async () => {
  const { root, runId } = await startRun();
  const childId = await spawnChild(root, 'reviewer');
  const token = (await stack.operator.launch(runId, childId)).token as string;
  const child = await connect(token);
  await child.ok('signal_review', { detail: '[REVIEW REQUIRED] done' });
  await root.ok('terminate_child', { agent_id: childId });
  const sentinel = await eventually(async () => (await child.inbox(0, 0)).messages.find((m) => m.kind === 'terminate'));
  // The ack that ends it is answered (through the first replica): its token is dead on both.
  await child.ack(sentinel.seq);
  await refusedEverywhereAtOnce(token);
  const relaunch = await stack.operator.request('GET', `/runs/${runId}/agents/${childId}/launch`);
  expect(relaunch.status).toBe(409);
  expect(relaunch.json.error.code).toBe('agent_terminated');
});

it('revokes every token of a run on the operator\'s word, before the word is answered', async () => {
  const { runId, rootToken } = await startRun();
  const other = await startRun();
  const res = await stack.operator.request('POST', `/runs/${runId}/tokens/revoke`);
  expect(res.status).toBe(200);
  await refusedEverywhereAtOnce(rootToken);
  // Only that run's: the other run's token is never refused as revoked (a replica may answer 503 for a moment under load).
  for (const url of replicas) {
    expect((await inboxAt(url, other.rootToken)).code).not.toBe('token_revoked');
    await eventually(async () => ((await inboxAt(url, other.rootToken)).status === 200 ? true : undefined), 10_000);
  }
  expect((await stack.operator.request('POST', '/runs/run_000000000000/tokens/revoke')).status).toBe(404);
});

it('keeps live agents working through a rotation of the signing secret', async () => {
  const { rootToken } = await startRun();
  const rotated = await stack.addGateway(28812, { DIPPER_TOKEN_SECRET: 'the-new-secret', DIPPER_TOKEN_SECRET_PREVIOUS: base.tokenSecret });
  const fresh = mintAgentToken('the-new-secret', { ...verifyAgentToken([base.tokenSecret], rootToken)!, exp: expiryOf(Date.now(), 600) });
  expect((await inboxAt(rotated, rootToken)).status).toBe(200);
  expect((await inboxAt(rotated, fresh)).status).toBe(200);
  const viaRotated = await connect(rootToken, rotated);
  expect(Array.isArray((await viaRotated.ok('list_peers', {})).peers)).toBe(true);
  const foreign = mintAgentToken('some-other-secret', { ...verifyAgentToken([base.tokenSecret], rootToken)!, exp: expiryOf(Date.now(), 600) });
  expect((await inboxAt(rotated, foreign)).status).toBe(401);
});

it('judges tokens by the shared table while the registry is out of reach: a revoked one refused, a valid one let in', async () => {
  const { runId, rootToken } = await startRun();
  const other = await startRun();
  expect((await inboxAt(stack.gatewayUrl, rootToken)).status).toBe(200);
  expect((await stack.operator.request('POST', `/runs/${runId}/tokens/revoke`)).status).toBe(200);
  // The registry lives on this stack's worker: without it no replica's copy refreshes.
  await stack.worker.kill('SIGKILL');
  // The positive sign that the copy is stale: its age passes the staleness bound the stack was given (1.5 s).
  await eventually(async () => {
    const page = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    const age = Number(/^dipper_revocations_age_seconds(?:\{[^}]*\})? (\S+)$/m.exec(page)?.[1]);
    return age > 2 ? true : undefined;
  }, 20_000);
  // Authentication alone answers these probes: the revoked token is refused, the valid one reaches the route (400 for its malformed cursor).
  expect(await refusedAt(stack.gatewayUrl, rootToken)).toBe(true);
  const valid = await fetch(`${stack.gatewayUrl}/api/runtime/inbox?cursor=not-a-number`, { headers: { authorization: `Bearer ${other.rootToken}` } });
  expect(valid.status).toBe(400);
  await stack.restartWorker();
  await eventually(async () => ((await inboxAt(stack.gatewayUrl, other.rootToken)).status === 200 ? true : undefined), 30_000);
}, 60_000);
