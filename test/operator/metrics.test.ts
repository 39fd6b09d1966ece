import { eventually } from '../support/clients';
import { closeAll, connect, env, operator, startRun } from '../support/team';

/**
 * The pages Prometheus scrapes: the gateway's `/metrics` and the worker's
 * metrics port, read without a token. Each family is read before and after
 * the call that should move it.
 */
afterAll(closeAll);

/** The sample of `name` whose labels include `labels`, summed over the rest; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const set = open >= 0 && line.startsWith(`${name}{`) ? line.slice(open + 1, line.lastIndexOf('}')) : '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

const scrape = async (url: string) => {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};
const gateway = () => scrape(env.gatewayUrl);
const worker = () => scrape(env.workerMetricsUrl);

describe('metrics', () => {
  it("count the gateway's tool calls by surface, tool and outcome, with their latency, and what waits for people", async () => {
    const started = (await operator.request('POST', '/runs', { task: 'Be counted.' })).json;
    const [runId, token] = [started.run_id as string, started.root.agent_token as string];
    const root = await connect(token);
    const before = await gateway();
    const ok = { surface: 'beidou', tool: 'list_peers', outcome: 'ok' };
    const refused = { surface: 'beidou', tool: 'send_message', outcome: 'invalid_input' };
    await root.ok('list_peers', {});
    await root.ok('list_peers', {});
    await root.fail('send_message', { to: '', content: 'x' });
    const after = await gateway();
    expect(sample(after, 'dipper_tool_calls_total', ok) - sample(before, 'dipper_tool_calls_total', ok)).toBe(2);
    expect(sample(after, 'dipper_tool_calls_total', refused) - sample(before, 'dipper_tool_calls_total', refused)).toBe(1);
    expect(sample(after, 'dipper_tool_call_seconds_count', { tool: 'list_peers' }) - sample(before, 'dipper_tool_call_seconds_count', { tool: 'list_peers' })).toBe(2);
    expect(sample(after, 'dipper_tool_call_seconds_bucket', { tool: 'list_peers', le: '+Inf' })).toBe(sample(after, 'dipper_tool_call_seconds_count', { tool: 'list_peers' }));
    // Nothing of any run or agent is on the page.
    expect(after).not.toContain(runId);
    expect(after).not.toMatch(/ag_[0-9a-f]{12}/);
    expect(sample(after, 'dipper_revocations_age_seconds')).toBeLessThan(60);

    // A long poll held.
    const cursor = (await root.inbox(0, 0)).next_cursor;
    const polling = root.inbox(cursor, 20_000).catch(() => undefined);
    await eventually(async () => (sample(await gateway(), 'dipper_long_polls_held') >= 1 ? true : undefined));

    // A question and an approval waiting for a person are counted (from visibility, within a few seconds).
    const [questionsBefore, approvalsBefore] = [sample(after, 'dipper_questions_waiting'), sample(after, 'dipper_approvals_waiting')];
    const asked = root.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Count me?', header: 'Count', multiSelect: false, options: [] }] } }, undefined, { timeout: 60_000 }).catch(() => undefined);
    const isphere = await connect(token, 'isphere');
    await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0001', content_text: 'Count this send.' });
    await eventually(async () => {
      const now = await gateway();
      return sample(now, 'dipper_questions_waiting') > questionsBefore && sample(now, 'dipper_approvals_waiting') > approvalsBefore ? true : undefined;
    }, 30_000, 500);
    await operator.request('POST', `/runs/${runId}/cancel`, { reason: 'test over' });
    await asked;
    await polling;
  });

  it("the worker's page: its health, event and audit writes, agent processes, and the SDK core's workflow task figures", async () => {
    const health = await fetch(`${env.workerMetricsUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, polling: true });
    const before = await worker();
    const { root, runId } = await startRun(undefined, 'Write events.');
    await root.ok('declare_plan', { tasks: [{ id: 'a', role: 'a', skill: 'worker', task: 'Do a.' }] });
    const after = await eventually(async () => {
      const text = await worker();
      return sample(text, 'dipper_store_write_seconds_count', { store: 'events' }) > sample(before, 'dipper_store_write_seconds_count', { store: 'events' }) ? text : undefined;
    });
    expect(after).toContain('dipper_runtime_processes');
    expect(after).toContain('dipper_runtime_exits_total');
    // The core's own: workflow tasks done, with their latency, moved by the run just started.
    expect(sample(after, 'temporal_workflow_task_execution_latency_count')).toBeGreaterThan(sample(before, 'temporal_workflow_task_execution_latency_count'));
    expect(after).not.toContain(runId);
    await operator.request('POST', `/runs/${runId}/cancel`, { reason: 'test over' });
  });
});
