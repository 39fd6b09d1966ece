import { eventually, type AgentClient } from '../support/clients';
import { closeAll, connect, operator, spawn, startRun, task } from '../support/team';

/**
 * Once a tool returns, every later read by any agent of the run reflects
 * it: list_peers (from the caller, its leader, a teammate), list_ready and
 * list_pending_reviews, each read sent the moment the call answered, with no
 * waiting in between. Later surfaces extend this with their own state.
 */
afterAll(closeAll);

async function statusOf(reader: AgentClient, agentId: string): Promise<string | undefined> {
  const { peers } = await reader.ok('list_peers', { scope: 'all' });
  return peers.find((p: { agent_id: string }) => p.agent_id === agentId)?.status;
}

const pendingIds = async (leader: AgentClient) => ((await leader.ok('list_pending_reviews', {})).items as { agent_id: string }[]).map((r) => r.agent_id).sort();

it('every state-changing beidou tool is seen by the next read of any agent', async () => {
  const { root, runId, rootId } = await startRun();

  await root.ok('declare_plan', { tasks: [task('a'), task('b'), task('c', ['a']), task('d'), task('e', ['d'])] });
  expect((await root.ok('list_ready')).ready.sort()).toEqual(['a', 'b', 'd']);

  const a = await spawn(root, runId, 'a');
  expect((await root.ok('list_ready')).ready.sort()).toEqual(['b', 'd']);
  for (const reader of [root, a.client]) expect(await statusOf(reader, a.agentId)).toBe('active');
  const b = await spawn(root, runId, 'b');
  const { peers: teammates } = await a.client.ok('list_peers', {});
  expect(teammates.map((p: { agent_id: string }) => p.agent_id).sort()).toEqual([b.agentId, rootId].sort());

  await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
  for (const reader of [a.client, b.client]) expect(await statusOf(reader, a.agentId)).toBe('review_pending');
  // The leader's very next read meets the review gate: the report is already in its mirror.
  expect((await root.fail('list_peers', { scope: 'all' })).code).toBe('review_gate_denied');
  expect(await pendingIds(root)).toEqual([a.agentId]);

  await b.client.ok('request_termination', { detail: 'b is done' });
  for (const reader of [a.client, b.client]) expect(await statusOf(reader, b.agentId)).toBe('termination_requested');
  // A termination request is not a review: the pending list is unchanged.
  expect(await pendingIds(root)).toEqual([a.agentId]);

  await root.ok('terminate_child', { agent_id: a.agentId });
  for (const reader of [root, b.client]) expect(['terminating', 'terminated']).toContain(await statusOf(reader, a.agentId));
  expect(await pendingIds(root)).toEqual([]);
  expect((await root.ok('list_ready')).ready.sort()).toEqual(['c', 'd']);

  await root.ok('update_plan_task', { task_id: 'd', status: 'done', note: 'done by hand' });
  expect((await root.ok('list_ready')).ready.sort()).toEqual(['c', 'e']);

  const team = await b.client.ok('create_team', {
    name: 'b-helpers',
    task: 'Help b.',
    roles: [{ role: 'helper', skill: 'worker', description: 'Helps.' }],
  });
  const helperId = team.members[0].agent_id;
  for (const reader of [b.client, root]) expect(await statusOf(reader, helperId)).toBe('active');
  expect((await b.client.ok('list_peers', { scope: 'children' })).peers.map((p: { agent_id: string }) => p.agent_id)).toEqual([helperId]);

  const helper = await connect((await operator.launch(runId, helperId)).token);
  const sent = await b.client.ok('send_message', { to: helperId, content: 'hello helper' });
  expect((await helper.inbox(0, 0)).messages.map((m: { message_id: string }) => m.message_id)).toContain(sent.message_id);

  // remove_plan is refused while b is in flight; once b is approved it goes, and the next list_ready says so.
  await root.ok('terminate_child', { agent_id: b.agentId });
  await root.ok('remove_plan', {});
  expect((await root.fail('list_ready', {})).code).toBe('no_active_plan');

  // Questions: each hop is in the next holder's inbox, and each step in the question's record, when the call returns.
  const asked = helper.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Which port?', header: 'Port', multiSelect: false, options: [] }] } }, undefined, { timeout: 60_000 });
  const held = await eventually(async () => (await b.client.inbox(0, 0)).messages.find((m: { content: string }) => m.content.startsWith('[INBOX QUESTION]')));
  const qid = /qid: (q_[A-Za-z0-9_-]+)/.exec(held.content)![1];
  await b.client.ok('escalate_question', { qid, reason: 'Not mine.' });
  expect((await root.inbox(0, 0)).messages.some((m: { content: string }) => m.content.includes(`qid: ${qid}`))).toBe(true);
  await root.ok('escalate_question', { qid, reason: 'The user decides.' });
  expect((await operator.request('GET', `/runs/${runId}/questions/${qid}`)).json).toMatchObject({ holder: 'user', chain: [b.agentId, rootId, 'user'] });
  expect((await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [{ selected_labels: [], text: '8080' }] })).status).toBe(200);
  expect((await operator.request('GET', `/runs/${runId}/questions/${qid}`)).json).toMatchObject({ status: 'answered', holder: null });
  expect(((await asked) as unknown as { structuredContent: { answer_text: string } }).structuredContent.answer_text).toBe('Port: 8080');
}, 60_000);

it('every task board change is seen by the next read of any agent of the run', async () => {
  const { root, runId } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a')] });
  const a = await spawn(root, runId, 'a');
  const [mine, theirs] = await Promise.all([connect(root.token, 'agentteam'), connect(a.client.token, 'agentteam')]);
  const readers = [mine, theirs];
  const get = async (reader: AgentClient, number: number) => (await reader.ok('task_get', { channel: runId, number })).task;

  const made = await mine.ok('task_create', { channel: runId, tasks: [{ title: 'Seen at once' }] });
  const n = made.tasks[0].number;
  for (const reader of readers) {
    expect((await reader.ok('task_list', { channel: runId })).items.map((t: { number: number }) => t.number)).toContain(n);
  }
  await theirs.ok('task_update', { channel: runId, number: n, status: 'in_progress' });
  for (const reader of readers) expect((await get(reader, n)).status).toBe('in_progress');
  await theirs.ok('task_set_claim', { channel: runId, numbers: [n], claimed: true });
  for (const reader of readers) expect((await get(reader, n)).assignee).toBe(a.agentId);
  await theirs.ok('task_checkpoint', { channel: runId, number: n, summary: 'Halfway.' });
  for (const reader of readers) expect((await reader.ok('task_get', { channel: runId, number: n })).checkpoint_count).toBe(1);
  await mine.ok('task_delete', { channel: runId, number: n });
  for (const reader of readers) expect((await reader.fail('task_get', { channel: runId, number: n })).code).toBe('task_deleted');
});

it('an iSphere approval, once decided, is in the asking agent\'s inbox, and what it sent is in the conversation and the audit, when each call returns', async () => {
  const { root, runId } = await startRun();
  const isphere = await connect(root.token, 'isphere');
  const call = { target_type: 'contact', target_id: 'c_0003', content_text: 'Seen at once.' };
  const id = (await isphere.ok('isphere_send_message', call)).approval.approval_id;
  expect((await operator.request('GET', `/runs/${runId}/isphere/approvals/${id}`)).json.status).toBe('pending');
  expect((await operator.request('POST', `/runs/${runId}/isphere/approvals/${id}/approve`, {})).status).toBe(200);
  expect((await root.inbox(0, 0)).messages.some((m: { content: string }) => m.content.includes(id))).toBe(true);
  expect((await operator.request('GET', `/runs/${runId}/isphere/approvals/${id}`)).json.status).toBe('approved');
  const sent = await isphere.ok('isphere_send_message', { ...call, dry_run: false, approval_id: id });
  expect((await isphere.ok('isphere_receive_messages', { conversation_id: 'conv_d_0003', limit: 1 })).messages[0].message_id).toBe(sent.message_ref);
  expect((await operator.request('GET', '/isphere/audit?limit=1')).json.records[0]).toMatchObject({ approval_id: id, kind: 'outcome', result: 'sent', message_ref: sent.message_ref });
});
