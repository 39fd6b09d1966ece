import { AgentClient, eventually } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { startStack, type Stack } from '../support/stack';
import { connectTemporal } from '../support/temporal';

/**
 * Questions outlive the processes around them, end with their run, and
 * say so when no human gateway takes them.
 */
let stack: Stack;
let noHuman: string;
const clients: AgentClient[] = [];
let temporal: Awaited<ReturnType<typeof connectTemporal>>;
beforeAll(async () => {
  stack = await startStack('questions', 28890);
  // A replica configured without a human gateway (DIPPER_HUMAN_GATEWAY=off).
  noHuman = await stack.addGateway(28891, { DIPPER_HUMAN_GATEWAY: 'off' });
  temporal = await connectTemporal();
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stack?.stop();
  await temporal?.close();
});

const why = { question: 'Why?', header: 'Why', multiSelect: false, options: [] };

async function rootOf(url = stack.gatewayUrl) {
  const run = (await stack.operator.request('POST', '/runs', { task: 'questions' })).json;
  const root = await AgentClient.connect(url, run.root.agent_token);
  clients.push(root);
  return { runId: run.run_id as string, root };
}

function ask(client: AgentClient, question = why) {
  return client.mcp.callTool({ name: 'ask_user', arguments: { questions: [question] } }, undefined, { timeout: 120_000 }) as Promise<any>;
}

const pending = (runId: string) =>
  eventually(async () => {
    const res = await stack.operator.request('GET', `/questions?run=${runId}`);
    return res.status === 200 && res.json.questions.length > 0 ? res.json.questions[0] : undefined;
  }, 30_000, 200);

it('keeps a pending question and its answer through a worker crash', async () => {
  const { runId, root } = await rootOf();
  const asked = ask(root);
  const q = await pending(runId);
  await stack.restartWorker('SIGKILL');
  // Answered while the new worker takes over: refused as unavailable (retryable) until then, applied once.
  await eventually(async () => {
    const res = await stack.operator.request('POST', `/runs/${runId}/questions/${q.qid}/answer`, { answers: [{ selected_labels: [], text: 'Because it is.' }] });
    if (res.status === 200) return true;
    expect(res.status).toBe(503);
    return undefined;
  }, 60_000, 250);
  expect((await asked).structuredContent.answer_text).toBe('Why: Because it is.');
}, 90_000);

it('answers gateway_unavailable when the question reaches the top and no human gateway takes it', async () => {
  const { root } = await rootOf(noHuman);
  const res = await ask(root, { ...why, question: 'Anyone?' });
  expect(res.isError).toBe(true);
  expect(JSON.parse(res.content[0].text).error).toMatchObject({ code: 'gateway_unavailable', qid: expect.stringMatching(/^q_/) });
});

it('ends with its run: the waiting ask_user is told, and nothing is left running', async () => {
  const { runId, root } = await rootOf();
  const asked = ask(root, { ...why, question: 'Still there?' });
  await pending(runId);
  expect((await stack.operator.request('POST', `/runs/${runId}/cancel`, { reason: 'done' })).status).toBe(200);
  const res = await asked;
  expect(JSON.parse(res.content[0].text).error.code).toBe('run_ended');
  await untilNothingRunning(temporal.client, stack.env.DIPPER_DATA_DIR, runId);
});

it("ends with its run when it is the root's review or a watchdog's question: nothing is left running", async () => {
  // The root idle for a second: the watchdog asks the person about it; and the root asks for a review.
  const run = (await stack.operator.request('POST', '/runs', { task: 'reviews end too', limits: { idle_watchdog_seconds: 1 } })).json;
  const root = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
  clients.push(root);
  const kinds = async () =>
    ((await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions as { system: { kind: string } | null }[]).map((q) => q.system?.kind).sort();
  await eventually(async () => ((await kinds()).includes('agent_idle') ? true : undefined), 30_000, 250);
  // The first test's SIGKILL can leave the token registry waiting out a dead worker's task (up to 10 s); meanwhile the
  // gateway fails closed with a retryable `unavailable` before the tool runs, and a client retries as it is told.
  await eventually(async () => {
    const out = await root.call('signal_review', { detail: '[REVIEW REQUIRED] all done' });
    if (!out.isError) return true;
    expect(out.error).toMatchObject({ code: 'unavailable', retryable: true });
    return undefined;
  }, 30_000, 500);
  await eventually(async () => ((await kinds()).includes('root_review') ? true : undefined), 15_000, 250);
  expect((await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'done' })).status).toBe(200);
  await untilNothingRunning(temporal.client, stack.env.DIPPER_DATA_DIR, run.run_id);
});
