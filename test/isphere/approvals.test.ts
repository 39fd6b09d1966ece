import { createHash } from 'node:crypto';
import path from 'node:path';
import { ANCHOR_EVENT, verifyChain } from '../../src/common/stores/audit';
import { SqliteAuditStore } from '../../src/common/stores/audit/sqliteStore';
import { SqliteEventStore } from '../../src/common/stores/eventStore';
import { auditKey } from '../../src/auth/secrets';
import { loadConfig } from '../../src/config';
import { paths } from '../../src/paths';
import { Client, Connection } from '@temporalio/client';
import { AgentClient, eventually } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { startProcess, waitForHttp, type DipperProcess } from '../support/processes';
import { closeAll, connect, env, operator, waitForInbox } from '../support/team';
import { testDataRoot } from '../setup/env';
import { sim } from './support';

/**
 * Approval-gated sends end to end: a dry run asks for an approval, a person
 * decides through the operator API, the agent hears of it in its inbox and
 * sends once, whatever happens around the send.
 */
afterAll(closeAll);

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Agent {
  runId: string;
  agentId: string;
  beidou: AgentClient;
  isphere: AgentClient;
}

async function agentOn(gatewayUrl = env.gatewayUrl): Promise<Agent> {
  const res = await operator.request('POST', '/runs', { task: 'Tell people things.' });
  const run = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  const isphere = gatewayUrl === env.gatewayUrl ? await connect(run.root.agent_token, 'isphere') : await AgentClient.connect(gatewayUrl, run.root.agent_token, 'isphere');
  return { runId: run.run_id, agentId: run.root.agent_id, beidou: await connect(run.root.agent_token), isphere };
}

const decide = (a: Agent, approvalId: string, verdict: 'approve' | 'reject', body: Record<string, unknown> = {}) =>
  operator.request('POST', `/runs/${a.runId}/isphere/approvals/${approvalId}/${verdict}`, body);

const deliveriesOf = async (clientMessageId: string) => (await sim.deliveries()).filter((d: any) => d.client_message_id === clientMessageId);

/** The test stack's audit chain, read as `dipper audit verify` would. */
async function auditOf(approvalId: string) {
  const config = loadConfig({ DIPPER_DATA_DIR: env.dataDir, DIPPER_TOKEN_SECRET: env.tokenSecret, DIPPER_OPERATOR_TOKEN: env.operatorToken });
  const key = auditKey(config, { tokenSecret: env.tokenSecret, operatorToken: env.operatorToken });
  const store = new SqliteAuditStore(paths.audit(env.dataDir), key);
  const events = new SqliteEventStore(paths.events(env.dataDir));
  try {
    const rows = await store.rows();
    const anchors = (await events.ofType(ANCHOR_EVENT, 0, 100_000)).map((e) => ({ seq: Number(e.data.seq), hash: String(e.data.hash) }));
    return { records: await store.ofApproval(approvalId), problems: verifyChain(rows, key, anchors) };
  } finally {
    await store.close();
    await events.close();
  }
}

beforeAll(() => sim.control('POST', '/reset', {}));

describe('an approved send', () => {
  let a: Agent;
  let approvalId: string;
  const text = 'The Q3 numbers are in the shared folder. 数字已更新。';
  const send = (more: Record<string, unknown> = {}) => ({ target_type: 'contact', target_id: 'c_0003', content_text: text, idempotency_key: 'q3-numbers', ...more });

  beforeAll(async () => {
    a = await agentOn();
  });

  it('starts at a dry run: an approval a person can see, with the exact words, that a send cannot use yet', async () => {
    const plan = await a.isphere.ok('isphere_send_message', send());
    expect(plan).toMatchObject({ send_status: 'planned', dry_run: true, content_sha256: sha(text), approval: { status: 'pending', use_by: null } });
    approvalId = plan.approval.approval_id;
    expect(approvalId).toMatch(/^apr_/);
    expect(plan.audit.approval_id).toBe(approvalId);
    // The same dry run again names the same approval.
    expect((await a.isphere.ok('isphere_send_message', send())).approval.approval_id).toBe(approvalId);

    // Listed through Temporal's visibility, which follows a new workflow by up to seconds on a busy machine.
    const listed = await eventually(async () => {
      const got = await operator.request('GET', `/isphere/approvals?run=${a.runId}`);
      return got.status !== 200 || got.json.approvals.length > 0 ? got : undefined;
    });
    expect(listed.status).toBe(200);
    expect(listed.json.approvals).toEqual([
      expect.objectContaining({ approval_id: approvalId, status: 'pending', words: text, requester: { agent_id: a.agentId, role: expect.any(String) }, binding: expect.objectContaining({ content_sha256: sha(text) }) }),
    ]);
    const early = await a.isphere.call('isphere_send_message', send({ dry_run: false, approval_id: approvalId }));
    expect(early.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'pending' } });
    expect(await deliveriesOf(`dip-${approvalId}`)).toEqual([]);
  });

  it('tells the agent when a person approves, then sends once, records it, and answers a repeat from the first outcome', async () => {
    // The channel is what the gateway saw, never what the body claims: a claimed `via` is refused and decides nothing.
    const claimed = await decide(a, approvalId, 'approve', { via: 'console' });
    expect(claimed.status).toBe(400);
    expect(claimed.json).toMatchObject({ error: { code: 'invalid_input', field: 'via' } });
    expect((await operator.request('GET', `/runs/${a.runId}/isphere/approvals/${approvalId}`)).json.status).toBe('pending');
    const approved = await decide(a, approvalId, 'approve');
    expect(approved.json).toEqual({ status: 'approved', already: false });
    const told = await waitForInbox(a.beidou, (m) => m.content.includes(approvalId));
    expect(told.content).toMatch(/^\[ISPHERE APPROVAL\] apr_\S+ was approved by \S+ for isphere_send_message to Wang Fang/);
    expect((await decide(a, approvalId, 'reject', { reason: 'changed my mind' })).status).toBe(409);

    const sent = await a.isphere.ok('isphere_send_message', send({ dry_run: false, approval_id: approvalId }));
    expect(sent).toMatchObject({ dry_run: false, send_status: 'sent', message_ref: expect.stringMatching(/^m_/), target: { target_id: 'c_0003' } });
    expect(sent.audit).toMatchObject({ dry_run: false, approval_id: approvalId, operator_id: expect.any(String), replayed: false, content_sha256: sha(text) });
    const again = await a.isphere.ok('isphere_send_message', send({ dry_run: false, approval_id: approvalId }));
    expect(again).toMatchObject({ send_status: 'sent', message_ref: sent.message_ref });
    expect(again.audit.replayed).toBe(true);

    const delivered = await deliveriesOf(`dip-${approvalId}`);
    expect(delivered).toEqual([expect.objectContaining({ target_id: 'c_0003', content_sha256: sha(text) })]);
    const { records, problems } = await auditOf(approvalId);
    expect(problems).toEqual([]);
    expect(records.map((r) => [r.kind, r.result])).toEqual([
      ['intent', null],
      ['outcome', 'sent'],
    ]);
    expect(records[1]).toMatchObject({ approver: sent.audit.operator_id, approved_via: 'api', requester: a.agentId, source: 'bridge', message_ref: sent.message_ref, key_sha256: sha('q3-numbers') });
    // The agent reads what it sent.
    const conv = await a.isphere.ok('isphere_receive_messages', { conversation_id: 'conv_d_0003', limit: 1 });
    expect(conv.messages[0]).toMatchObject({ message_id: sent.message_ref, content_text: text });
  });

  it('refuses the approval for other words, another key, and a dry run of the same send says it was used', async () => {
    const other = await a.isphere.call('isphere_send_message', send({ dry_run: false, approval_id: approvalId, content_text: `${text}!` }));
    expect(other.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'mismatch' } });
    // The approval's one send was made: another key would be a second send.
    const otherKey = await a.isphere.call('isphere_send_message', send({ dry_run: false, approval_id: approvalId, idempotency_key: 'another' }));
    expect(otherKey.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'used' } });
    const usedPlan = await a.isphere.ok('isphere_send_message', send());
    expect(usedPlan.approval).toMatchObject({ approval_id: approvalId });
    expect(await a.isphere.fail('isphere_send_message', send({ dry_run: false, approval_id: 'apr_nothing_here' }))).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'unknown' } });
    expect(await deliveriesOf(`dip-${approvalId}`)).toHaveLength(1);
  });
});

describe('one key, two sends', () => {
  it('refuses a second send under the same idempotency key with IDEMPOTENCY_CONFLICT, and sends nothing for it', async () => {
    const a = await agentOn();
    const first = { target_type: 'contact', target_id: 'c_0004', content_text: 'First words.', idempotency_key: 'weekly-note' };
    const second = { ...first, content_text: 'Other words, same key.' };
    const ids = [];
    for (const call of [first, second]) {
      const id = (await a.isphere.ok('isphere_send_message', call)).approval.approval_id;
      await decide(a, id, 'approve');
      ids.push(id);
    }
    expect(ids[0]).not.toBe(ids[1]);
    expect((await a.isphere.ok('isphere_send_message', { ...first, dry_run: false, approval_id: ids[0] })).send_status).toBe('sent');
    const refused = await a.isphere.call('isphere_send_message', { ...second, dry_run: false, approval_id: ids[1] });
    expect(refused.error).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', retryable: false });
    expect(await deliveriesOf(`dip-${ids[1]}`)).toEqual([]);
    expect((await auditOf(ids[1])).records).toEqual([]);
  });
});

describe('a rejected send', () => {
  it('tells the agent why, and the approval cannot be used', async () => {
    const a = await agentOn();
    const plan = await a.isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0001', content_text: 'Everyone: lunch is on me.' });
    const id = plan.approval.approval_id;
    expect((await decide(a, id, 'reject', {})).status).toBe(400);
    expect((await decide(a, id, 'reject', { reason: 'Not in the team channel, please.' })).json).toEqual({ status: 'rejected', already: false });
    const told = await waitForInbox(a.beidou, (m) => m.content.includes(id));
    expect(told.content).toContain('rejected by');
    expect(told.content).toContain('Not in the team channel, please.');
    const refused = await a.isphere.call('isphere_send_message', { target_type: 'group', target_id: 'g_0001', content_text: 'Everyone: lunch is on me.', dry_run: false, approval_id: id });
    expect(refused.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'rejected' } });
    expect(await deliveriesOf(`dip-${id}`)).toEqual([]);
  });
});

describe('approvals that run out', () => {
  let gateway: DipperProcess;
  const url = 'http://127.0.0.1:28900';
  beforeAll(async () => {
    gateway = startProcess(
      'gateway',
      { ...env.processEnv, DIPPER_PORT: '28900', DIPPER_ISPHERE_APPROVAL_TTL_SECONDS: '2', DIPPER_ISPHERE_APPROVAL_USE_SECONDS: '2' },
      path.join(testDataRoot, 'approvals-short-gateway.log'),
    );
    await waitForHttp(`${url}/healthz`);
  });
  afterAll(() => gateway.kill());

  it('expire undecided and unused, telling the agent each time; neither can send', async () => {
    const a = await agentOn(url);
    const undecided = (await a.isphere.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0004', content_text: 'Nobody will look at this.' })).approval.approval_id;
    const unused = (await a.isphere.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0004', content_text: 'Approved, then forgotten.' })).approval.approval_id;
    await decide(a, unused, 'approve');
    const expired = await waitForInbox(a.beidou, (m) => m.content.includes(undecided) && m.content.includes('expired'));
    expect(expired.content).toContain('nobody decided');
    await waitForInbox(a.beidou, (m) => m.content.includes(unused) && m.content.includes('expired unused'));
    for (const [id, words] of [
      [undecided, 'Nobody will look at this.'],
      [unused, 'Approved, then forgotten.'],
    ]) {
      const refused = await a.isphere.call('isphere_send_message', { target_type: 'contact', target_id: 'c_0004', content_text: words, dry_run: false, approval_id: id });
      expect(refused.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'expired' } });
    }
    // A decision after expiry is refused: there is nothing left to decide.
    expect((await decide(a, undecided, 'approve')).status).toBe(409);
    expect((await sim.deliveries()).filter((d: any) => [`dip-${undecided}`, `dip-${unused}`].includes(d.client_message_id))).toEqual([]);
  });
});

describe('a run\'s open approvals', () => {
  let capped: DipperProcess;
  beforeAll(async () => {
    capped = startProcess('gateway', { ...env.processEnv, DIPPER_PORT: '28901', DIPPER_ISPHERE_MAX_OPEN_APPROVALS: '2' }, path.join(testDataRoot, 'approvals-capped-gateway.log'));
    await waitForHttp('http://127.0.0.1:28901/healthz');
  });
  afterAll(() => capped.kill());

  it('are capped: past the limit a new one is refused, while the same request still finds its own', async () => {
    const a = await agentOn('http://127.0.0.1:28901');
    const ask = (n: number) => a.isphere.call('isphere_send_message', { target_type: 'contact', target_id: 'c_0004', content_text: `Capped ${n}.` });
    const first = (await ask(1)).data.approval.approval_id;
    await ask(2);
    // The count comes from visibility, which follows a start closely but not at once.
    await eventually(async () => ((await operator.request('GET', `/isphere/approvals?run=${a.runId}&status=all`)).json.approvals.length === 2 ? true : undefined));
    const third = await ask(3);
    expect(third.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'approval_quota', limit: 2 } });
    expect((await ask(1)).data.approval.approval_id).toBe(first);
  });
});

describe('one key, many calls', () => {
  it('sends once for 100 concurrent identical calls, each answered with the same message', async () => {
    const a = await agentOn();
    const call = { target_type: 'conversation', target_id: 'conv_g_0002', content_text: 'Shanghai: the audit moves to Tuesday.', idempotency_key: 'audit-move' };
    const id = (await a.isphere.ok('isphere_send_message', call)).approval.approval_id;
    await decide(a, id, 'approve');
    const answers = await Promise.all(
      Array.from({ length: 100 }, async () => {
        for (;;) {
          const got = await a.isphere.call('isphere_send_message', { ...call, dry_run: false, approval_id: id });
          // Over the agent's rate, or past the wait while the send runs: the call says to repeat it, and is repeated.
          if (got.isError && got.error!.retryable) continue;
          return got;
        }
      }),
    );
    expect(answers.filter((x) => x.isError)).toEqual([]);
    expect(new Set(answers.map((x) => x.data.message_ref)).size).toBe(1);
    // A call after the send is answered from it, and says so.
    const later = await a.isphere.ok('isphere_send_message', { ...call, dry_run: false, approval_id: id });
    expect(later).toMatchObject({ send_status: 'sent', message_ref: answers[0].data.message_ref, audit: { replayed: true } });
    expect(await deliveriesOf(`dip-${id}`)).toHaveLength(1);
    const { records, problems } = await auditOf(id);
    expect(problems).toEqual([]);
    expect(records.map((r) => r.kind)).toEqual(['intent', 'outcome']);
  });
});

describe('a run that ends', () => {
  it('cancels its pending and unused approvals, closes one in its receipt window, and leaves nothing running', async () => {
    const a = await agentOn();
    const pending = (await a.isphere.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0010', content_text: 'Pending when the run ends.' })).approval.approval_id;
    const unused = (await a.isphere.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0010', content_text: 'Approved when the run ends.' })).approval.approval_id;
    await decide(a, unused, 'approve');
    // One sent just before: its workflow would stay open for repeats (600 s) but for the run's end.
    const sentCall = { target_type: 'contact', target_id: 'c_0010', content_text: 'Sent before the run ends.' };
    const sent = (await a.isphere.ok('isphere_send_message', sentCall)).approval.approval_id;
    await decide(a, sent, 'approve');
    expect((await a.isphere.ok('isphere_send_message', { ...sentCall, dry_run: false, approval_id: sent })).send_status).toBe('sent');
    expect((await operator.request('POST', `/runs/${a.runId}/cancel`, { reason: 'done for today' })).status).toBeLessThan(300);
    for (const id of [pending, unused]) {
      const view = await eventually(async () => {
        const got = await operator.request('GET', `/runs/${a.runId}/isphere/approvals/${id}`);
        return got.json.status === 'cancelled' ? got.json : undefined;
      });
      expect(view.outcome).toBeNull();
    }
    const connection = await Connection.connect({ address: env.temporalAddress });
    try {
      await untilNothingRunning(new Client({ connection, namespace: env.namespace }), env.dataDir, a.runId);
    } finally {
      await connection.close();
    }
    // The one sent stays recorded as sent; nothing unsent was recorded for the others.
    expect((await auditOf(sent)).records.map((r) => r.result)).toEqual([null, 'sent']);
    for (const id of [pending, unused]) expect((await auditOf(id)).records).toEqual([]);
  });
});
