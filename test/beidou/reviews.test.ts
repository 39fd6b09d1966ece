import { childChangedSignal } from '../../workflows/agent/messages';
import { agentWorkflowId } from '../../workflows/ids';
import { eventually } from '../support/clients';
import { connectTemporal } from '../support/temporal';
import { closeAll, eventsOf, operator, spawn, startRun, task, waitForInbox } from '../support/team';

afterAll(closeAll);

async function teamOfTwo() {
  const { root, runId, rootId } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
  const a = await spawn(root, runId, 'a');
  const b = await spawn(root, runId, 'b');
  return { root, runId, rootId, a, b };
}

describe('signal_review', () => {
  it("records the review, reports it to the leader's inbox and lists it as pending, oldest first", async () => {
    const { root, runId, a, b } = await teamOfTwo();
    expect(await root.ok('list_pending_reviews')).toEqual({ items: [] });
    expect(await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] page built' })).toEqual({
      recorded: true,
      review_pending: true,
    });
    await b.client.ok('signal_review', { detail: '[iteration ready] api halfway' });
    const report = await waitForInbox(root, (m) => m.kind === 'review_report' && m.from === a.agentId);
    expect(report.content).toBe('[REVIEW REQUIRED] page built');

    const pending = (await root.ok('list_pending_reviews')).items;
    expect(pending.map((p: any) => p.agent_id)).toEqual([a.agentId, b.agentId]);
    expect(pending[0]).toMatchObject({ role: 'worker', summary: '[REVIEW REQUIRED] page built', name: expect.any(String) });
    expect(pending[0].age_s).toBeGreaterThanOrEqual(0);
    expect(pending[0].review_pending_ts).toBeLessThanOrEqual(pending[1].review_pending_ts);

    const status = await eventsOf(runId, 'status', 2);
    expect(status.map((e: any) => e.data.state)).toContain('review_pending');
    // The directory says so too (read by the operator: the root itself is kept to the review tools meanwhile).
    await eventually(async () => {
      const { agents } = (await operator.request('GET', `/runs/${runId}/agents`)).json;
      return agents.find((p: any) => p.agent_id === a.agentId).status === 'review_pending' ? true : undefined;
    });
    expect((await root.fail('list_peers', { scope: 'children' })).code).toBe('review_gate_denied');
  });

  it.each([
    ['detail_empty', '   '],
    ['detail_empty', null],
    ['envelope_missing', 'all done, please look'],
  ])('refuses with envelope_missing (%s) and records nothing', async (reason, detail) => {
    const { root, a } = await teamOfTwo();
    const error = await a.client.fail('signal_review', { detail });
    expect(error).toMatchObject({ code: 'envelope_missing', reason });
    expect(await root.ok('list_pending_reviews')).toEqual({ items: [] });
  });

  it("is cleared when the leader answers with a message (rework), which the child receives", async () => {
    const { root, runId, a } = await teamOfTwo();
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] v1' });
    await root.ok('send_message', { to: a.agentId, content: 'Please add tests.' });
    expect(await root.ok('list_pending_reviews')).toEqual({ items: [] });
    const ack = await eventsOf(runId, 'review.acknowledged');
    expect(ack[0].agent_id).toBe(a.agentId);
    await waitForInbox(a.client, (m) => m.content === 'Please add tests.' && m.from !== a.agentId);
    // The child may signal again: reentrant.
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] v2' });
    const again = (await root.ok('list_pending_reviews')).items;
    expect(again.map((p: any) => p.summary)).toEqual(['[REVIEW REQUIRED] v2']);
  });

  it('does not let a peer clear a review: only the leader can', async () => {
    const { root, a, b } = await teamOfTwo();
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] v1' });
    await b.client.ok('send_message', { to: a.agentId, content: 'nice work' });
    expect((await root.ok('list_pending_reviews')).items).toHaveLength(1);
  });
});

describe('request_termination', () => {
  it('is refused while the plan has unfinished tasks, then accepted', async () => {
    const { root, runId, a } = await teamOfTwo();
    await a.client.ok('declare_plan', { tasks: [task('x')] });
    const error = await a.client.fail('request_termination', { detail: 'done?' });
    expect(error).toMatchObject({ code: 'plan_incomplete', unfinished: ['x'] });
    await a.client.ok('update_plan_task', { task_id: 'x', status: 'done' });
    expect(await a.client.ok('request_termination', { detail: 'done' })).toEqual({ recorded: true, termination_requested: true });
    await waitForInbox(root, (m) => m.kind === 'termination_request' && m.content.includes('done'));
    const status = await eventsOf(runId, 'status');
    expect(status.some((e: any) => e.data.state === 'termination_requested')).toBe(true);
  });

  it("is turned down by the leader's message: the flag clears and terminate_child needs a review again", async () => {
    const { root, a } = await teamOfTwo();
    await a.client.ok('request_termination', {});
    await waitForInbox(root, (m) => m.kind === 'termination_request');
    await root.ok('send_message', { to: a.agentId, content: 'Not yet: fix the bug first.' });
    expect((await root.fail('terminate_child', { agent_id: a.agentId })).code).toBe('child_not_pending_review');
  });
});

describe('the root agent', () => {
  it('sends its review to the human, and the approved termination ends the run', async () => {
    const { root, runId, rootId } = await startRun();
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] final report' });
    const pending = await operator.request('GET', `/runs/${runId}`);
    expect(pending.json.pending_root).toEqual([expect.objectContaining({ kind: 'review', detail: '[REVIEW REQUIRED] final report' })]);

    const rework = await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'review', verdict: 'rework', text: 'More.' });
    expect(rework.status).toBe(200);
    await waitForInbox(root, (m) => m.content === 'rework: More.');

    const nothing = await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'termination', verdict: 'approve' });
    expect(nothing).toMatchObject({ status: 409, json: { error: { code: 'nothing_pending' } } });

    await root.ok('request_termination', { detail: 'finished' });
    const end = await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'termination', verdict: 'approve' });
    expect(end.json).toEqual({ ok: true, run_status: 'completed' });
    await eventsOf(runId, 'run_completed');
    const view = await operator.request('GET', `/runs/${runId}`);
    expect(view.json.status).toBe('completed');
    // Ended: refused as a terminated recipient, or (once the root's token revocation lands, within a second) not let in at all.
    const ended = await eventually(async () => {
      const out = await root.call('send_message', { to: rootId, content: 'anyone?' }).catch((e: Error) => ({ error: { code: /token_revoked/.test(e.message) ? 'token_revoked' : e.message, field: undefined } }));
      return out.error?.code === 'recipient_terminated' || out.error?.code === 'token_revoked' ? out.error : undefined;
    });
    if (ended.code === 'recipient_terminated') expect(ended.field).toBe('to');
  });

  it("answers the root's review and its termination request separately", async () => {
    const { root, runId, rootId } = await startRun();
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] report' });
    await root.ok('request_termination', { detail: 'done' });
    await operator.request('POST', `/runs/${runId}/root/decision`, { kind: 'review', verdict: 'approve' });
    const view = await operator.request('GET', `/runs/${runId}`);
    expect(view.json.pending_root.map((r: any) => r.kind)).toEqual(['termination']);
    await eventually(async () => {
      const peers = await root.ok('list_peers', { scope: 'all' });
      return peers.peers.find((p: any) => p.agent_id === rootId).status === 'termination_requested' ? true : undefined;
    });
  });
});

describe("a leader's mirror of its child", () => {
  it('keeps the newest of two changes that arrive out of order', async () => {
    const { root, runId, rootId, a } = await teamOfTwo();
    // A rework's "review answered" and the child's next report can be in flight together; Temporal may deliver
    // them in either order. Here the child's own numbered changes are replayed to the leader, newest first.
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] first' });
    await root.ok('send_message', { to: a.agentId, content: 'Rework.' });
    await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] second' });
    const temporal = await connectTemporal();
    try {
      const leader = temporal.client.workflow.getHandle(agentWorkflowId(runId, rootId));
      const pending = { status: 'review_pending' as const, review_pending: true, review_pending_ts: Date.now(), termination_requested: false, summary: 'late' };
      const answered = { status: 'active' as const, review_pending: false, review_pending_ts: null, termination_requested: false, summary: 'late' };
      await leader.signal(childChangedSignal, { agent_id: a.agentId, seq: 1000, patch: pending });
      await leader.signal(childChangedSignal, { agent_id: a.agentId, seq: 999, patch: answered });
      const items = (await root.ok('list_pending_reviews')).items as any[];
      expect(items.map((i) => [i.agent_id, i.summary])).toEqual([[a.agentId, 'late']]);
      // And the leader can approve it.
      await root.ok('terminate_child', { agent_id: a.agentId });
    } finally {
      await temporal.close();
    }
  });
});
