import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from '../../src/common/isphere/signature';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';
import { sim } from './support';

/**
 * Approvals decided by an approval system: Dipper announces each request to
 * a configured endpoint (signed, retried until taken), and the system answers
 * through the signed webhook. Its own stack, so the endpoint and secrets are
 * its own.
 */
const SECRET = 'hook-secret-0123456789abcdef';
const NOTIFY_SECRET = 'notify-secret-0123456789abcdef';
let stack: Stack;
let receiver: http.Server;
const received: { body: any; signature: string; delivery: string }[] = [];
let refusals = 2;

beforeAll(async () => {
  await sim.control('POST', '/reset', {});
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      // The first announcements fail, as a system that is down for a moment would.
      if (refusals-- > 0) {
        res.writeHead(503).end();
        return;
      }
      received.push({ body: JSON.parse(raw), signature: String(req.headers['x-dipper-signature']), delivery: String(req.headers['x-dipper-delivery']) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  stack = await startStack('isphere-hooks', 28910, {
    DIPPER_ISPHERE_WEBHOOK_SECRETS: `ticketing:${SECRET}`,
    DIPPER_ISPHERE_APPROVAL_NOTIFY_URL: `http://127.0.0.1:${port}/approvals`,
    DIPPER_ISPHERE_APPROVAL_NOTIFY_SECRET: NOTIFY_SECRET,
  });
});
afterAll(async () => {
  await stack?.stop();
  receiver?.close();
});

async function hook(runId: string, approvalId: string, body: Record<string, unknown>, opts: { secret?: string; at?: number; raw?: string } = {}) {
  const raw = opts.raw ?? JSON.stringify(body);
  const res = await fetch(`${stack.gatewayUrl}/hooks/isphere/approvals/${runId}/${approvalId}/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dipper-signature': sign(opts.secret ?? SECRET, raw, opts.at) },
    body: raw,
  });
  return { status: res.status, json: (await res.json()) as any };
}

it('announces a request until the approval system takes it, and the system approves through the webhook once', async () => {
  const res = await stack.operator.request('POST', '/runs', { task: 'Notify the team.' });
  const run = res.json as { run_id: string; root: { agent_token: string } };
  const isphere = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token, 'isphere');
  try {
    const words = 'Release 4.2 ships tonight.';
    const plan = await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0003', content_text: words });
    const id = plan.approval.approval_id;

    const note = await eventually(async () => received.find((r) => r.body.approval_id === id), 30_000);
    expect(note.delivery).toBe(id);
    expect(note.body).toMatchObject({ run_id: run.run_id, tool: 'isphere_send_message', target: { target_id: 'g_0003' }, content_sha256: plan.content_sha256, preview: words });
    expect(note.body.decision_url).toBe(`${stack.env.DIPPER_PUBLIC_URL ?? stack.gatewayUrl}/hooks/isphere/approvals/${run.run_id}/${id}/decision`);
    // Signed with the notify secret, over the body it carried.
    const t = Number(/t=(\d+)/.exec(note.signature)![1]);
    expect(note.signature).toBe(sign(NOTIFY_SECRET, JSON.stringify(note.body), t));
    expect(refusals).toBeLessThan(0);

    const decision = { decision: 'approve', approver: 'operator', delivery_id: 'tkt-1' };
    expect((await hook(run.run_id, id, decision, { secret: 'not-the-secret-at-all' })).json.error.code).toBe('bad_signature');
    expect((await hook(run.run_id, id, decision, { at: Math.floor(Date.now() / 1000) - 600 })).json.error.code).toBe('stale_signature');
    expect(await hook(run.run_id, id, { ...decision, approver: 'mallory' })).toMatchObject({ status: 403, json: { error: { code: 'not_an_approver' } } });
    const tampered = JSON.stringify(decision);
    const forged = await fetch(`${stack.gatewayUrl}/hooks/isphere/approvals/${run.run_id}/${id}/decision`, {
      method: 'POST',
      headers: { 'x-dipper-signature': sign(SECRET, tampered) },
      body: tampered.replace('approve', 'reject'),
    });
    expect(forged.status).toBe(401);

    expect(await hook(run.run_id, id, decision)).toEqual({ status: 200, json: { status: 'approved', already: false } });
    // The same delivery again (a retry by the system) is answered, not applied; another decision is refused.
    expect(await hook(run.run_id, id, decision)).toEqual({ status: 200, json: { status: 'approved', already: true } });
    expect((await hook(run.run_id, id, { decision: 'reject', approver: 'operator', reason: 'no', delivery_id: 'tkt-2' })).status).toBe(409);

    const sent = await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0003', content_text: words, dry_run: false, approval_id: id });
    expect(sent).toMatchObject({ send_status: 'sent', audit: { operator_id: 'operator' } });
    expect((await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${id}`)).toHaveLength(1);
  } finally {
    await isphere.close();
  }
});
