import { AgentClient } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { sim } from './support';

/**
 * The isphere codes a healthy stack never produces: a bridge slower than its
 * timeout, a bridge that refuses Dipper's token, an audit store that cannot
 * be written (the send is refused and nothing goes out). A stack of its own,
 * with a short bridge timeout and the audit append failing on purpose.
 */
let stack: Stack;
let wrongToken: string;
const opened: AgentClient[] = [];

beforeAll(async () => {
  await sim.control('POST', '/reset', {});
  stack = await startStack('isphere-faults', 28930, { DIPPER_ISPHERE_BRIDGE_TIMEOUT_MS: '800', DIPPER_FAULTS: 'isphereAuditAppend' });
  wrongToken = await stack.addGateway(28931, { DIPPER_ISPHERE_BRIDGE_TOKEN: 'not-the-bridge-token-at-all' });
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
  await sim.control('POST', '/reset', {});
  await stack?.stop();
});

async function agent(url = stack.gatewayUrl) {
  const res = await stack.operator.request('POST', '/runs', { task: 'Meet failures.' });
  const run = res.json as { run_id: string; root: { agent_token: string } };
  const isphere = await AgentClient.connect(url, run.root.agent_token, 'isphere');
  opened.push(isphere);
  return { runId: run.run_id, isphere };
}

it('answers TIMEOUT, retryable, when the bridge is slower than its timeout', async () => {
  const { isphere } = await agent();
  await sim.control('POST', '/faults', { route: 'reads', mode: 'delay', delay_ms: 2000, count: 1 });
  const slow = await isphere.call('isphere_search_contacts', { query: 'Li Wei', source_preference: 'bridge' });
  expect(slow.error).toMatchObject({ code: 'TIMEOUT', retryable: true });
  expect(slow.data.audit).toMatchObject({ result: 'error' });
});

it('answers CONNECTOR_FAILED when the bridge refuses Dipper\'s token, without showing it', async () => {
  const { isphere } = await agent(wrongToken);
  const refused = await isphere.call('isphere_search_groups', { query: 'Finance', source_preference: 'bridge' });
  expect(refused.error).toMatchObject({ code: 'CONNECTOR_FAILED', retryable: false });
  expect(refused.error!.message).toContain('DIPPER_ISPHERE_BRIDGE_TOKEN');
  expect(refused.text).not.toContain('not-the-bridge-token-at-all');
});

it('refuses a send whose intent record cannot be written: INTERNAL_ERROR, retryable, nothing sent, the approval still good', async () => {
  const { runId, isphere } = await agent();
  const args = { target_type: 'contact', target_id: 'c_0003', content_text: 'Only with a record.' };
  const id = (await isphere.ok('isphere_send_message', args)).approval.approval_id;
  expect((await stack.operator.request('POST', `/runs/${runId}/isphere/approvals/${id}/approve`, {})).status).toBe(200);
  const refused = await isphere.call('isphere_send_message', { ...args, dry_run: false, approval_id: id });
  expect(refused.error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true, details: { reason: 'audit_unavailable' } });
  expect((await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${id}`)).toEqual([]);
  const view = await stack.operator.request('GET', `/runs/${runId}/isphere/approvals/${id}`);
  expect(view.json).toMatchObject({ status: 'approved', outcome: null, attempt: 1 });
});
