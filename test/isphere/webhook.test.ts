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
const received: { body: any; signature: string; delivery: string; method?: string; path?: string }[] = [];
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
      received.push({ body: JSON.parse(raw), signature: String(req.headers['x-dipper-signature']), delivery: String(req.headers['x-dipper-delivery']), method: req.method, path: req.url });
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

const decisionPath = (runId: string, approvalId: string) => `/hooks/isphere/approvals/${runId}/${approvalId}/decision`;

/** A decision posted to the approval's URL; `signedFor` signs it for another path (a replay to another approval). */
async function hook(runId: string, approvalId: string, body: Record<string, unknown>, opts: { secret?: string; at?: number; raw?: string; signedFor?: string } = {}) {
  const raw = opts.raw ?? JSON.stringify(body);
  const path = decisionPath(runId, approvalId);
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dipper-signature': sign(opts.secret ?? SECRET, { method: 'POST', path: opts.signedFor ?? path, body: raw }, opts.at) },
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
    // Signed with the notify secret, over the method, the receiver's path and the body it carried.
    const t = Number(/t=(\d+)/.exec(note.signature)![1]);
    expect([note.method, note.path]).toEqual(['POST', '/approvals']);
    expect(note.signature).toBe(sign(NOTIFY_SECRET, { method: 'POST', path: '/approvals', body: JSON.stringify(note.body) }, t));
    expect(refusals).toBeLessThan(0);

    const decision = { decision: 'approve', approver: 'operator', delivery_id: 'tkt-1' };
    expect((await hook(run.run_id, id, decision, { secret: 'not-the-secret-at-all' })).json.error.code).toBe('bad_signature');
    expect((await hook(run.run_id, id, decision, { at: Math.floor(Date.now() / 1000) - 600 })).json.error.code).toBe('stale_signature');
    expect(await hook(run.run_id, id, { ...decision, approver: 'mallory' })).toMatchObject({ status: 403, json: { error: { code: 'not_an_approver' } } });
    const tampered = JSON.stringify(decision);
    const forged = await fetch(`${stack.gatewayUrl}/hooks/isphere/approvals/${run.run_id}/${id}/decision`, {
      method: 'POST',
      headers: { 'x-dipper-signature': sign(SECRET, { method: 'POST', path: decisionPath(run.run_id, id), body: tampered }) },
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

it('a signed decision is good for the approval it was signed for only: posted to another approval, of this run or another, it is refused and decides nothing', async () => {
  const open = async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Ask twice.' })).json as { run_id: string; root: { agent_token: string } };
    const isphere = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token, 'isphere');
    try {
      const ask = async (words: string) => (await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0003', content_text: words })).approval.approval_id as string;
      return { runId: run.run_id, ids: [await ask('First request.'), await ask('Second request.')] };
    } finally {
      await isphere.close();
    }
  };
  const [mine, other] = await Promise.all([open(), open()]);
  const decision = { decision: 'approve', approver: 'operator', delivery_id: 'tkt-replayed' };
  const signedFor = decisionPath(mine.runId, mine.ids[0]);
  // The decision for the first approval, replayed byte for byte to the second and to another run's approval.
  for (const [runId, id] of [[mine.runId, mine.ids[1]], [other.runId, other.ids[0]]]) {
    expect(await hook(runId, id, decision, { signedFor })).toMatchObject({ status: 401, json: { error: { code: 'bad_signature' } } });
  }
  // The approval it was signed for takes it; the others are still waiting for a person.
  expect(await hook(mine.runId, mine.ids[0], decision, { signedFor })).toEqual({ status: 200, json: { status: 'approved', already: false } });
  for (const [runId, id] of [[mine.runId, mine.ids[1]], [other.runId, other.ids[0]]]) {
    const view = await stack.operator.request('GET', `/runs/${runId}/isphere/approvals/${id}`);
    expect([id, (view.json as { status: string }).status]).toEqual([id, 'pending']);
  }
});
