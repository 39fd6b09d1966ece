import { closeAll, eventsOf, spawn, startRun, task, waitForInbox } from '../support/team';

afterAll(closeAll);

it("keeps a leader to the review tools while a child's review waits, and lets it go once answered", async () => {
  const { runId, root } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
  const a = await spawn(root, runId, 'a');
  // Before any report the gate is open.
  expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });

  await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
  // The report closes the gate for the leader's very next call: reads and changes alike.
  for (const [tool, args] of [
    ['spawn_agent', { task_id: 'b' }],
    ['list_ready', {}],
    ['list_peers', { scope: 'all' }],
    ['update_plan_task', { task_id: 'b', status: 'done' }],
  ] as const) {
    const refused = await root.fail(tool, args);
    expect(refused).toMatchObject({
      code: 'review_gate_denied',
      pending_reviews: [expect.objectContaining({ agent_id: a.agentId })],
      allowed_tools: expect.arrayContaining(['terminate_child', 'send_message', 'list_pending_reviews', 'ask_user']),
    });
    expect(refused.message).toContain(a.agentId);
  }
  // Nothing changed behind the refusals: b is still ready, not done.
  expect((await root.ok('list_pending_reviews')).items.map((r: { agent_id: string }) => r.agent_id)).toEqual([a.agentId]);
  const denied = await eventsOf(runId, 'review_gate.denied', 4);
  expect(denied.map((e) => e.data.tool)).toEqual(expect.arrayContaining(['spawn_agent', 'list_ready', 'list_peers', 'update_plan_task']));

  // Rework (a message) answers the review: the gate opens.
  await root.ok('send_message', { to: a.agentId, content: 'One more test, please.' });
  expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });

  // A second report closes it again; approving (terminate_child) opens it.
  await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] with the test' });
  expect((await root.fail('spawn_agent', { task_id: 'b' })).code).toBe('review_gate_denied');
  await root.ok('terminate_child', { agent_id: a.agentId });
  await waitForInbox(a.client, (m) => m.kind === 'terminate');
  expect((await root.ok('spawn_agent', { task_id: 'b' })).agent_id).toMatch(/^ag_/);
});
